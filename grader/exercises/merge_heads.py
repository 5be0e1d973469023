"""merge-heads: (b, n_head, t, head_size) -> (b, t, n_embd), the inverse split.

The heads' outputs must be laid side by side per position, head 0's
channels first, exactly undoing split-heads; c_proj then mixes them. Values
are compared exactly, and the wrong layouts that keep the right shape are
named.
"""

from __future__ import annotations

import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.tensors import (
    check_no_error,
    compare_tensor,
    failed,
    run_and_capture,
)

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
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "(2, 3, 5, 4) -> (2, 5, 12)",
            "hidden": False,
            "b": 2,
            "nh": 3,
            "t": 5,
            "hs": 4,
        },
        {
            "name": "GPT-2 small (1, 12, 7, 64)",
            "hidden": False,
            "b": 1,
            "nh": 12,
            "t": 7,
            "hs": 64,
        },
    ]
    for i in range(3):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "b": rng.randint(1, 3),
                "nh": rng.choice([2, 3, 4, 6, 8]),
                "t": rng.randint(3, 11),
                "hs": rng.choice([5, 8, 16]),
            }
        )
    for i, case in enumerate(cases):
        case["seed"] = rng.randrange(2**31) if case["hidden"] else i
    return cases


def inputs(case: dict) -> torch.Tensor:
    g = torch.Generator().manual_seed(case["seed"])
    shape = (case["b"], case["nh"], case["t"], case["hs"])
    return torch.randn(*shape, generator=g)


def reference(y: torch.Tensor) -> torch.Tensor:
    b, nh, t, hs = y.shape
    return y.transpose(1, 2).contiguous().view(b, t, nh * hs)


def run_case(fn, case: dict):
    return run_and_capture(fn, inputs(case))


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    y = inputs(case)
    b, nh, t, hs = y.shape
    expected = reference(y)
    got = tensors.get("output")
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "n_embd"),
        sizes={"n_head": nh, "head_size": hs},
        rtol=RTOL,
        atol=ATOL,
        what="the merged heads",
        hidden=hidden,
    )
    if failed(results) and got is not None and got.shape == expected.shape:
        variants = [
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
        match = fingerprint(
            name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
        )
        if match:
            results.append(match)
    return results
