"""merge-heads: (b, n_head, t, head_size) -> (b, t, n_embd), the inverse split.

The heads' outputs must be laid side by side per position, head 0's
channels first, exactly undoing split-heads; c_proj then mixes them. Values
are compared exactly, and the wrong layouts that keep the right shape are
named.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.answers import tensor_answer, wrong_shape_mistake
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case, normal, seed_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

SLUG = "merge-heads"
ENTRY_POINT = "merge_heads"
SIGNATURE = "merge_heads(y) -> Tensor"

RTOL, ATOL = 0.0, 0.0  # a reshape moves numbers; it must not change them

ERRORS = [
    (
        "view size is not compatible",
        "view-after-transpose",
        "after transpose(1, 2) the tensor is not contiguous, so .view cannot "
        "merge the last two axes: call .contiguous() first, or use .reshape",
    ),
]

MESSAGES = {
    "merge-without-transpose": (
        "your output has the right shape but was made by viewing (b, n_head, "
        "t, head_size) directly as (b, t, n_embd): that concatenates whole "
        "heads in memory order, so a 'position' holds other positions' "
        "outputs. transpose(1, 2) to (b, t, n_head, head_size) first, then "
        "merge the last two axes"
    ),
    "interleaved-heads": (
        "your channels are interleaved across heads (head_size-major): GPT-2 "
        "lays the heads side by side, head 0's head_size channels first, so "
        "transpose(1, 2) and merge (n_head, head_size) in that order"
    ),
    "heads-summed": (
        "your output is the heads' outputs added (or averaged) together, one "
        "head_size vector per position: multi-head attention keeps every "
        "head, laid side by side into n_embd = n_head * head_size channels, "
        "and lets c_proj mix them. transpose(1, 2), then merge the last two axes"
    ),
    "heads-concatenated-on-time": (
        "you concatenated the heads along the time axis (torch.cat(heads, "
        "dim=1) of (b, t, head_size) pieces): each position must get one "
        "vector holding every head's channels, so concatenate along the last "
        "(channel) axis, torch.cat(heads, dim=-1)"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("(2, 3, 5, 4) -> (2, 5, 12)", False, b=2, nh=3, t=5, hs=4),
        new_case("GPT-2 small (1, 12, 7, 64)", False, b=1, nh=12, t=7, hs=64),
    ]
    for i in range(3):
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                b=rng.randint(1, 3),
                nh=rng.choice([2, 3, 4, 6, 8]),
                t=rng.randint(3, 11),
                hs=rng.choice([5, 8, 16]),
            )
        )
    return seed_cases(cases, rng)


def inputs(case: dict) -> torch.Tensor:
    return normal(case["seed"], (case["b"], case["nh"], case["t"], case["hs"]))[0]


def reference(y: torch.Tensor) -> torch.Tensor:
    b, nh, t, hs = y.shape
    return y.transpose(1, 2).contiguous().view(b, t, nh * hs)


run_case = calls(inputs)


def _variants(y: torch.Tensor) -> list[Variant]:
    b, nh, t, hs = y.shape
    return [
        Variant(
            "merge-without-transpose",
            lambda: y.reshape(b, t, nh * hs),
            MESSAGES["merge-without-transpose"],
        ),
        Variant(
            "interleaved-heads",
            lambda: y.permute(0, 2, 3, 1).reshape(b, t, nh * hs),
            MESSAGES["interleaved-heads"],
        ),
    ]


def _other_shapes(y: torch.Tensor) -> list[Variant]:
    """Known wrong answers whose shape differs from the right one."""
    b, nh, t, hs = y.shape
    return [
        Variant("heads-summed", lambda: y.sum(1), MESSAGES["heads-summed"]),
        Variant("heads-summed", lambda: y.mean(1), MESSAGES["heads-summed"]),
        Variant(
            "heads-concatenated-on-time",
            lambda: y.reshape(b, nh * t, hs),
            MESSAGES["heads-concatenated-on-time"],
        ),
    ]


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    return reference(inputs(case))


@expectation
def known_mistakes(case: dict) -> dict:
    """What the known mistakes give, of the right shape and of others
    (shipped for the visible cases)."""
    y = inputs(case)
    return {
        "same_shape": computed(_variants(y)),
        "other_shapes": computed(_other_shapes(y)),
    }


def check_case(case: dict, data: dict, tensors: dict):
    if raised := case_error(case, data, ERRORS):
        return raised
    y = inputs(case)
    b, nh, t, hs = y.shape
    named = wrong_shape_mistake(  # a sum or mean over heads: equal to rounding
        case["name"],
        tensors.get("output"),
        (b, t, nh * hs),
        shipped_variants(known_mistakes(case)["other_shapes"]),
        hidden=bool(case["hidden"]),
        rtol=1e-5,
        atol=1e-6,
    )
    return (
        tensor_answer(
            case["name"],
            data,
            tensors,
            expected_output(case),
            variants=lambda: shipped_variants(known_mistakes(case)["same_shape"]),
            axes=("batch", "time", "n_embd"),
            sizes={"n_head": case["nh"], "head_size": case["hs"]},
            rtol=RTOL,
            atol=ATOL,
            what="the merged heads",
            hidden=bool(case["hidden"]),
        )
        + named
    )
