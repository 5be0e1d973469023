"""split-heads: (b, t, n_embd) -> (b, n_head, t, head_size), GPT-2's layout.

Head h owns channels h * head_size .. (h + 1) * head_size - 1 of every
position. The right shape is easy to get with the wrong values (a view
straight to (b, n_head, t, head_size) mixes positions), so values are
compared exactly and the usual wrong layouts are named.
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
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "(2, 5, 12) into 3 heads",
            "hidden": False,
            "b": 2,
            "t": 5,
            "nh": 3,
            "hs": 4,
        },
        {
            "name": "GPT-2 small (1, 7, 768)",
            "hidden": False,
            "b": 1,
            "t": 7,
            "nh": 12,
            "hs": 64,
        },
    ]
    for i in range(3):
        nh = rng.choice([2, 3, 4, 6, 8])
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "b": rng.randint(1, 3),
                "t": rng.choice([t for t in range(3, 12) if t != nh]),
                "nh": nh,
                "hs": rng.choice([5, 8, 16]),
            }
        )
    for i, case in enumerate(cases):
        case["seed"] = rng.randrange(2**31) if case["hidden"] else i
    return cases


def inputs(case: dict) -> torch.Tensor:
    g = torch.Generator().manual_seed(case["seed"])
    return torch.randn(case["b"], case["t"], case["nh"] * case["hs"], generator=g)


def reference(x: torch.Tensor, n_head: int) -> torch.Tensor:
    b, t, c = x.shape
    return x.view(b, t, n_head, c // n_head).transpose(1, 2)


def run_case(fn, case: dict):
    return run_and_capture(fn, inputs(case), case["nh"])


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), hidden=hidden)
    if raised:
        return [raised]
    x, nh = inputs(case), case["nh"]
    b, t, c = x.shape
    hs = c // nh
    expected = reference(x, nh).contiguous()
    got = tensors.get("output")
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "n_head", "time", "head_size"),
        sizes={"n_embd": c},
        shape_hints={
            "swapped:n_head,time": ("missing-transpose", MESSAGES["missing-transpose"])
        },
        rtol=RTOL,
        atol=ATOL,
        what="the split heads",
        hidden=hidden,
    )
    if failed(results) and got is not None and got.shape == expected.shape:
        variants = [
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
        match = fingerprint(
            name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
        )
        if match:
            results.append(match)
    return results
