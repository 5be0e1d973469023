"""softmax-temperature: next-token probabilities from logits at a temperature.

p = softmax(logits / temperature) over the last axis. Cases include logits
near 1000, where exp overflows unless the row maximum is subtracted first,
and a call without `temperature` to check the default.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.answers import finite_answer, tensor_answer
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import normal, seed_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

SLUG = "softmax-temperature"
ENTRY_POINT = "next_token_probs"
SIGNATURE = "next_token_probs(logits, temperature=1.0) -> Tensor"

RTOL, ATOL = 1e-4, 1e-7
UNSTABLE = (
    "unstable-softmax",
    "exp overflowed (or every term underflowed to 0): subtract each row's "
    "maximum before exp "
    "(logits - logits.max(dim=-1, keepdim=True).values); the softmax is "
    "unchanged by that shift and the largest exponent becomes exp(0) = 1",
)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "(11,), default temperature",
            "hidden": False,
            "shape": [11],
            "temperature": None,
            "scale": 2.0,
        },
        {
            "name": "(2, 3, 97), T=0.7",
            "hidden": False,
            "shape": [2, 3, 97],
            "temperature": 0.7,
            "scale": 2.0,
        },
        {
            "name": "(2, 50) logits near 1000",
            "hidden": False,
            "shape": [2, 50],
            "temperature": 1.0,
            "scale": 30.0,
            "offset": 1000.0,
        },
        {
            "name": "hidden gpt2 vocabulary",
            "hidden": True,
            "shape": [50257],
            "temperature": rng.choice([0.6, 1.5, 2.0]),
            "scale": 3.0,
        },
    ]
    for i in range(2):
        shape = [rng.randint(2, 4), rng.choice([31, 89, 131])]
        if i == 1:
            shape.insert(1, rng.randint(2, 5))
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "shape": shape,
                "temperature": rng.choice([0.5, 0.8, 1.3, 2.0]),
                "scale": rng.choice([1.0, 4.0, 60.0]),
                "offset": rng.choice([0.0, -500.0, 800.0]),
            }
        )
    return seed_cases(cases, rng)


def inputs(case: dict) -> torch.Tensor:
    logits = normal(case["seed"], case["shape"])[0] * case["scale"]
    return logits + case.get("offset", 0.0)


def _arguments(case: dict) -> tuple:
    """The call's arguments: no temperature where the case tests its default."""
    if case["temperature"] is None:
        return (inputs(case),)
    return inputs(case), case["temperature"]


run_case = calls(_arguments)


def _rows_shifted_summed_over_all(z: torch.Tensor) -> torch.Tensor:
    """exp(z - each row's max) over the sum of every row's exponentials: a
    stable shift per row, then a sum() without dim."""
    e = torch.exp(z - z.amax(dim=-1, keepdim=True))
    return e / e.sum()


def _variants(logits: torch.Tensor, temperature: float) -> list[Variant]:
    z = logits.double()
    return [
        Variant(
            "temperature-multiplied",
            lambda: torch.softmax(z * temperature, dim=-1),
            "your probabilities match softmax(logits * temperature): divide "
            "by the temperature, so T < 1 sharpens and T > 1 flattens",
        ),
        Variant(
            "temperature-applied-twice",
            lambda: torch.softmax(z / temperature**2, dim=-1),
            "your probabilities match softmax(logits / T²): the temperature "
            "was applied twice (the logits divided by it, and the shifted "
            "ones again before exp). Divide by the temperature once",
        ),
        Variant(
            "temperature-ignored",
            lambda: torch.softmax(z, dim=-1),
            "your probabilities match softmax(logits) with no temperature: "
            "divide the logits by temperature first",
        ),
        Variant(
            "softmax-wrong-axis",
            lambda: torch.softmax(z / temperature, dim=0),
            "your probabilities are normalised over the first axis: the "
            "vocabulary is the last axis, softmax(..., dim=-1)",
        ),
        Variant(
            "softmax-sum-all",
            lambda: torch.softmax((z / temperature).reshape(-1), dim=0).reshape(
                z.shape
            ),
            "your probabilities sum to 1 over the WHOLE tensor, not per row: "
            "a max() or sum() without dim reduces every axis; use "
            "max(dim=-1, keepdim=True) and sum(dim=-1, keepdim=True) so each "
            "last-axis row is its own distribution",
        ),
        Variant(
            "softmax-sum-all",
            lambda: _rows_shifted_summed_over_all(z / temperature),
            "your probabilities sum to 1 over the WHOLE tensor, not per row: "
            "you shifted each row by its own maximum, but sum() without dim "
            "adds every row's exponentials together; divide by "
            "sum(dim=-1, keepdim=True) so each last-axis row is its own "
            "distribution",
        ),
        Variant(
            "log-probabilities",
            lambda: torch.log_softmax(z / temperature, dim=-1),
            "your output matches log_softmax: return probabilities (each row "
            "sums to 1), not their logarithms",
        ),
    ]


AXES = {1: ("vocab",), 2: ("batch", "vocab"), 3: ("batch", "time", "vocab")}


def rtol_for(logits: torch.Tensor, temperature: float) -> float:
    """RTOL, or wider where float32 itself cannot do better.

    Rounding logits / temperature to float32 moves each scaled logit by up
    to half an ulp of the largest one; exp turns that into a relative error
    of the same size in each probability (twice, counting the row sum). With
    logits near 1000 that exceeds 1e-4, so a correct float32 softmax would
    fail on some draws.
    """
    largest = float(logits.abs().max()) / temperature
    return max(RTOL, 4 * torch.finfo(torch.float32).eps * largest)


_ERRORS = [
    (
        "missing 1 required positional argument: 'temperature'",
        "missing-default-temperature",
        "this call passes only the logits: give temperature its default, "
        "def next_token_probs(logits, temperature=1.0), so T = 1 leaves the "
        "distribution alone",
    ),
]


def _temperature(case: dict) -> float:
    return 1.0 if case["temperature"] is None else case["temperature"]


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    logits = inputs(case)
    return torch.softmax(logits.double() / _temperature(case), dim=-1).float()


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    return computed(_variants(inputs(case), _temperature(case)))


def check_case(case: dict, data: dict, tensors: dict):
    if raised := case_error(case, data, _ERRORS):
        return raised
    logits = inputs(case)
    temperature = _temperature(case)
    return tensor_answer(
        case["name"],
        data,
        tensors,
        expected_output(case),
        variants=lambda: shipped_variants(known_mistakes(case)),
        when=finite_answer,  # else check_finite already named unstable-softmax
        axes=AXES[logits.dim()],
        sizes={},
        rtol=rtol_for(logits, temperature),
        atol=ATOL,
        what="the probabilities",
        finite_hint=UNSTABLE,
        hidden=bool(case["hidden"]),
    )
