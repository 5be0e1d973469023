"""split-heads: (b, t, n_embd) -> (b, n_head, t, head_size), GPT-2's layout.

Head h owns channels h * head_size .. (h + 1) * head_size - 1 of every
position. The right shape is easy to get with the wrong values (a view
straight to (b, n_head, t, head_size) mixes positions), so values are
compared exactly and the usual wrong layouts are named.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.answers import tensor_answer, wrong_shape_mistake
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.tensors import case_error, run_and_capture
from grading_engine.exercises.kit.cases import new_case, normal, seed_cases
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


def inputs(case: dict) -> torch.Tensor:
    return normal(case["seed"], (case["b"], case["t"], case["nh"] * case["hs"]))[0]


def reference(x: torch.Tensor, n_head: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.view(b, t, n_head, c // n_head).transpose(1, 2)


def run_case(fn, case: dict):
    return run_and_capture(fn, inputs(case), case["nh"])


def _variants(x: torch.Tensor, nh: int) -> list[Variant]:
    b, t, c = x.shape
    hs = c // nh
    return [
        Variant(
            "view-without-transpose",
            lambda: x.reshape(b, nh, t, hs),
            MESSAGES["view-without-transpose"],
        ),
        Variant(
            "head-axis-last",
            lambda: x.view(b, t, hs, nh).permute(0, 3, 1, 2),
            MESSAGES["head-axis-last"],
        ),
        Variant(
            "missing-transpose",
            lambda: x.view(b, t, nh, hs),
            MESSAGES["missing-transpose"],
        ),
    ]


def _other_shapes(x: torch.Tensor, nh: int) -> list[Variant]:
    """Known wrong answers whose shape differs from the right one."""
    b, t, c = x.shape
    hs = c // nh
    return [
        Variant(
            "split-size-for-count",
            lambda: x.view(b, t, hs, nh).permute(0, 2, 1, 3),
            MESSAGES["split-size-for-count"],
        ),
    ]


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    return reference(inputs(case), case["nh"]).contiguous()


@expectation
def known_mistakes(case: dict) -> dict:
    """What the known mistakes give, of the right shape and of others
    (shipped for the visible cases)."""
    x, nh = inputs(case), case["nh"]
    return {
        "same_shape": computed(_variants(x, nh)),
        "other_shapes": computed(_other_shapes(x, nh)),
    }


def check_case(case: dict, data: dict, tensors: dict):
    if raised := case_error(case, data):
        return raised
    x, nh = inputs(case), case["nh"]
    b, t, c = x.shape
    named = wrong_shape_mistake(
        case["name"],
        tensors.get("output"),
        (b, nh, t, c // nh),
        shipped_variants(known_mistakes(case)["other_shapes"]),
        hidden=bool(case["hidden"]),
    )
    return (
        tensor_answer(
            case["name"],
            data,
            tensors,
            expected_output(case),
            variants=lambda: shipped_variants(known_mistakes(case)["same_shape"]),
            axes=("batch", "n_head", "time", "head_size"),
            sizes={"n_embd": x.shape[-1]},
            shape_hints={
                "swapped:n_head,time": (
                    "missing-transpose",
                    MESSAGES["missing-transpose"],
                )
            },
            rtol=RTOL,
            atol=ATOL,
            what="the split heads",
            hidden=bool(case["hidden"]),
        )
        + named
    )
