"""weight-layout-logits: logits from a head stored in either orientation.

`nn.Linear(d, V)` stores its weight (out, in) = (V, d), the embedding's
shape; Hugging Face's Conv1D and Flax/Keras Dense kernels store (in, out) =
(d, V). The learner gets the layout by name and must honour it. Hidden
square cases (V == d) catch code that guesses the orientation from the
shapes: there both products run, and only one is right.
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

SLUG = "weight-layout-logits"
ENTRY_POINT = "logits_for_layout"
SIGNATURE = "logits_for_layout(x, weight, layout) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5
LAYOUTS = ("out_in", "in_out")

ERRORS = [
    (
        "cannot be multiplied",
        "transposed-weight",
        "'out_in' is (V, d): use x @ weight.T; 'in_out' is (d, V): use x @ weight",
    ),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "out_in (nn.Linear), V=97, d=16",
            "hidden": False,
            "layout": "out_in",
            "V": 97,
            "d": 16,
            "b": 2,
            "t": 5,
        },
        {
            "name": "in_out (Conv1D), V=97, d=16",
            "hidden": False,
            "layout": "in_out",
            "V": 97,
            "d": 16,
            "b": 2,
            "t": 5,
        },
    ]
    for layout in LAYOUTS:
        size = rng.choice([24, 32, 48])
        cases.append(
            {
                "name": f"hidden square {layout}",
                "hidden": True,
                "layout": layout,
                "V": size,
                "d": size,
                "b": rng.randint(1, 3),
                "t": rng.randint(3, 9),
            }
        )
    for i in range(2):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "layout": rng.choice(LAYOUTS),
                "V": rng.choice([89, 131, 211]),
                "d": rng.choice([12, 20, 40]),
                "b": rng.randint(1, 3),
                "t": rng.randint(3, 9),
            }
        )
    for i, case in enumerate(cases):
        case["seed"] = rng.randrange(2**31) if case["hidden"] else i
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, str]:
    g = torch.Generator().manual_seed(case["seed"])
    x = torch.randn(case["b"], case["t"], case["d"], generator=g)
    rows = torch.randn(case["V"], case["d"], generator=g) / case["d"] ** 0.5
    # The same table of token rows, stored in the requested orientation.
    weight = rows if case["layout"] == "out_in" else rows.T.contiguous()
    return x, weight, case["layout"]


def run_case(fn, case: dict):
    return run_and_capture(fn, *inputs(case))


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    x, weight, layout = inputs(case)
    rows = weight if layout == "out_in" else weight.T
    expected = x @ rows.T
    got = tensors.get("output")
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "vocab"),
        sizes={"n_embd": case["d"]},
        rtol=RTOL,
        atol=ATOL,
        what="the logits",
        hidden=hidden,
    )
    if not failed(results) or got is None or got.shape != expected.shape:
        return results
    variants = []
    if case["V"] == case["d"]:
        # The other orientation only runs when V == d; with V != d it fails
        # in the child and is diagnosed from the error message instead.
        other = x @ rows
        wrong_way = Variant(
            "guessed-from-shape",
            lambda: other,
            f"the weight is square ({case['V']} x {case['d']}), so x @ weight "
            "and x @ weight.T both run and the shapes cannot say which is right "
            "(code that picks the orientation by matching sizes fails exactly "
            f"here): layout {layout!r} means "
            + (
                "(out, in), so use x @ weight.T"
                if layout == "out_in"
                else "(in, out), so use x @ weight"
            ),
        )
        variants.append(wrong_way)
    variants.append(
        Variant(
            "probabilities-not-logits",
            lambda: torch.softmax(expected, dim=-1),
            "your output matches softmax(logits): return the raw logits",
        )
    )
    match = fingerprint(
        name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
    )
    if match:
        results.append(match)
    return results
