"""split-heads: (b, t, n_embd) -> (b, n_head, t, head_size), GPT-2's layout.

Head h owns channels h * head_size .. (h + 1) * head_size - 1 of every
position. The right shape is easy to get with the wrong values (a view
straight to (b, n_head, t, head_size) mixes positions), so values are
compared exactly and the usual wrong layouts are named.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.answers import wrong_shape_mistake
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.judges import tensor_check
from grading_engine.exercises.kit.cases import new_case, normal, seed_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

SLUG = "split-heads"
ENTRY_POINT = "split_heads"
SIGNATURE = "split_heads(x, n_head) -> Tensor"

RTOL, ATOL = 0.0, 0.0  # a reshape moves numbers; it must not change them

MESSAGES = {
    "view-without-transpose": (
        "your tensor has the right shape but was made by viewing (b, t, "
        "n_embd) directly as (b, n_head, t, head_size): that reads the "
        "numbers in memory order, so one 'head' gets whole tokens and a "
        "'position' holds channels of other tokens. View as (b, t, n_head, "
        "head_size) first, then transpose(1, 2)"
    ),
    "head-axis-last": (
        "your heads take every n_head-th channel (a view as (b, t, head_size, "
        "n_head)): GPT-2's head h is the contiguous slice h * head_size .. "
        "(h + 1) * head_size - 1, so view as (b, t, n_head, head_size)"
    ),
    "missing-transpose": (
        "this is (b, t, n_head, head_size): the view is right, now move the "
        "head axis in front of time with .transpose(1, 2)"
    ),
    "split-size-for-count": (
        "your tensor is x.split(n_head, dim=-1) (or x.chunk(head_size, "
        "dim=-1)) stacked: split takes the SIZE of each piece and chunk the "
        "NUMBER of pieces, so you made head_size pieces of n_head channels. "
        "Cut n_embd into n_head pieces of head_size channels: "
        "x.split(head_size, dim=-1), x.chunk(n_head, dim=-1), or view as "
        "(b, t, n_head, head_size)"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("(2, 5, 12) into 3 heads", False, b=2, t=5, nh=3, hs=4),
        new_case("GPT-2 small (1, 7, 768)", False, b=1, t=7, nh=12, hs=64),
    ]
    for i in range(3):
        nh = rng.choice([2, 3, 4, 6, 8])
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                b=rng.randint(1, 3),
                t=rng.choice([t for t in range(3, 12) if t != nh]),
                nh=nh,
                hs=rng.choice([5, 8, 16]),
            )
        )
    return seed_cases(cases, rng)


def inputs(case: dict) -> tuple[torch.Tensor, int]:
    """(x, n_head), the call's arguments."""
    x = normal(case["seed"], (case["b"], case["t"], case["nh"] * case["hs"]))[0]
    return x, case["nh"]


def reference(x: torch.Tensor, n_head: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.view(b, t, n_head, c // n_head).transpose(1, 2)


run_case = calls(inputs)


def _variants(x: torch.Tensor, nh: int) -> dict[str, list[Variant]]:
    """Known wrong answers: of the right shape, tried on a wrong value, and
    of other shapes, tried on a wrong shape."""
    b, t, c = x.shape
    hs = c // nh
    same_shape = {
        "view-without-transpose": lambda: x.reshape(b, nh, t, hs),
        "head-axis-last": lambda: x.view(b, t, hs, nh).permute(0, 3, 1, 2),
        "missing-transpose": lambda: x.view(b, t, nh, hs),
    }
    other_shapes = {
        "split-size-for-count": lambda: x.view(b, t, hs, nh).permute(0, 2, 1, 3),
    }
    return {
        kind: [Variant(d, compute, MESSAGES[d]) for d, compute in found.items()]
        for kind, found in (("same_shape", same_shape), ("other_shapes", other_shapes))
    }


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    return reference(*inputs(case)).contiguous()


@expectation
def known_mistakes(case: dict) -> dict:
    """What the known mistakes give, of the right shape and of others
    (shipped for the visible cases)."""
    return {kind: computed(found) for kind, found in _variants(*inputs(case)).items()}


def _same_shape(case: dict) -> list:
    """The known mistakes of the right shape, as the expectation gave them
    (read, not computed: this ships with the learner edition)."""
    return known_mistakes(case)["same_shape"]


def _sizes(case: dict, _expected) -> dict:
    """n_embd, not in the output's shape, to name a wrong one."""
    return {"n_embd": case["nh"] * case["hs"]}


def _other_shapes(case: dict, tensors: dict, want) -> list:
    """The known mistakes of another shape, which the chain does not try
    (it fingerprints a wrong value at the right shape)."""
    return wrong_shape_mistake(
        case["name"],
        tensors.get("output"),
        want.shape,
        shipped_variants(known_mistakes(case)["other_shapes"]),
        hidden=bool(case["hidden"]),
    )


check_case = tensor_check(
    expected_output,
    _same_shape,
    axes=("batch", "n_head", "time", "head_size"),
    sizes=_sizes,
    shape_hints={
        "swapped:n_head,time": ("missing-transpose", MESSAGES["missing-transpose"])
    },
    what="the split heads",
    after=_other_shapes,
)
