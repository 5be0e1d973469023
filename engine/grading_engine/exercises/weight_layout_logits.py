"""weight-layout-logits: logits from a head stored in either orientation.

`nn.Linear(d, V)` stores its weight (out, in) = (V, d), the embedding's
shape; Hugging Face's Conv1D and Flax/Keras Dense kernels store (in, out) =
(d, V). The learner gets the layout by name and must honour it. Hidden
square cases (V == d) catch code that guesses the orientation from the
shapes: there both products run, and only one is right; one of them
(out_in, V = d = 16, seed 1616) is the same in every draw.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.fingerprints import Variant, computed
from grading_engine.checks.judges import tensor_check
from grading_engine.exercises.kit.cases import new_case, normal, seed_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

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
    (
        "which does not broadcast with previously seen size",
        "transposed-weight",
        "your einsum subscripts read the weight in one orientation for both "
        "layouts: 'out_in' is (V, d), 'btd,vd->btv'; 'in_out' is (d, V), "
        "'btd,dv->btv'",
    ),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case(
            "out_in (nn.Linear), V=97, d=16",
            False,
            layout="out_in",
            V=97,
            d=16,
            b=2,
            t=5,
        ),
        new_case(
            "in_out (Conv1D), V=97, d=16",
            False,
            layout="in_out",
            V=97,
            d=16,
            b=2,
            t=5,
        ),
    ]
    for layout in LAYOUTS:
        size = rng.choice([24, 32, 48])
        cases.append(
            new_case(
                f"hidden square {layout}",
                True,
                layout=layout,
                V=size,
                d=size,
                b=rng.randint(1, 3),
                t=rng.randint(3, 9),
            )
        )
    for i in range(2):
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                layout=rng.choice(LAYOUTS),
                V=rng.choice([89, 131, 211]),
                d=rng.choice([12, 20, 40]),
                b=rng.randint(1, 3),
                t=rng.randint(3, 9),
            )
        )
    cases = seed_cases(cases, rng)
    # The same in every draw (its seed fixed, after the draws above so they
    # stay as they were): a square 'out_in' weight, where x @ weight runs too,
    # so guessing the orientation from the shapes fails on any seed.
    cases.append(
        new_case(
            "hidden: fixed square out_in, V=d=16",
            True,
            layout="out_in",
            V=16,
            d=16,
            b=2,
            t=4,
            seed=1616,
        )
    )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, str]:
    x, rows = normal(
        case["seed"], (case["b"], case["t"], case["d"]), (case["V"], case["d"])
    )
    rows = rows / case["d"] ** 0.5
    # The same table of token rows, stored in the requested orientation.
    weight = rows if case["layout"] == "out_in" else rows.T.contiguous()
    return x, weight, case["layout"]


run_case = calls(inputs)


def _variants(x, rows, layout, expected) -> list[Variant]:
    variants = []
    V, d = rows.shape
    if V == d:
        # The other orientation only runs when V == d; with V != d it fails
        # in the child and is diagnosed from the error message instead.
        other = x @ rows
        wrong_way = Variant(
            "guessed-from-shape",
            lambda: other,
            f"the weight is square ({V} x {d}), so x @ weight "
            "and x @ weight.T both run and the shapes cannot say which is right "
            "(code that picks the orientation by matching sizes fails exactly "
            f"here): layout {layout!r} means "
            + (
                "(out, in), so use x @ weight.T"
                if layout == "out_in"
                else "(in, out), so use x @ weight"
            ),
        )
        # Code that guesses does one thing on every square weight (x @ weight,
        # say): wrong for one layout and, by luck, right for the other. The
        # lucky guess is a row of the same slip, so a learner right here and
        # wrong on the other layout is still named (checks.slip_rules); being
        # the answer, it never names a wrong output itself.
        lucky = Variant(wrong_way.diagnosis, lambda: expected, wrong_way.message)
        variants += [wrong_way, lucky]
    if layout == "in_out":
        # (d, V) memory read as (V, d): the numbers land in the wrong places.
        variants.append(
            Variant(
                "reshape-not-transpose",
                lambda: x @ rows.T.reshape(V, d).T,
                "your output matches a weight reshaped (or viewed) from "
                f"({d}, {V}) to ({V}, {d}): reshape keeps the memory order, so "
                "each 'row' mixes the numbers of several tokens. Turning "
                "(in, out) into (out, in) is a transpose: weight.T, or simply "
                "x @ weight",
            )
        )
    variants.append(
        Variant(
            "probabilities-not-logits",
            lambda: torch.softmax(expected, dim=-1),
            "your output matches softmax(logits): return the raw logits",
        )
    )
    return variants


def _rows(case: dict) -> tuple[torch.Tensor, torch.Tensor, str]:
    x, weight, layout = inputs(case)
    return x, weight if layout == "out_in" else weight.T, layout


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right logits (shipped for the visible cases)."""
    x, rows, _ = _rows(case)
    return x @ rows.T


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    x, rows, layout = _rows(case)
    return computed(_variants(x, rows, layout, x @ rows.T))


def _sizes(case: dict, _expected) -> dict:
    """n_embd, which the logits' shape does not hold, to name a wrong one."""
    return {"n_embd": case["d"]}


check_case = tensor_check(
    expected_output,
    known_mistakes,
    errors=ERRORS,
    axes=("batch", "time", "vocab"),
    sizes=_sizes,
    what="the logits",
)
