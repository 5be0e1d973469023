"""A wrong tensor that is the answer times one number, on any tensor exercise.

An embedding scaled by sqrt(n_embd) remembered from another paper, a loss
without its minus sign, a bias created with zeros and never filled: the
computation is right up to one constant. The output shows it whatever the
code, so no exercise lists these one by one.

Judged only on a failed value of the right shape, after the exercise's own
slips, and only where a chance fit is impossible: a float answer with at
least two different nonzero values.
"""

from __future__ import annotations

import math

import torch

from grading_engine.checks.result import CheckResult, likely_mistake
from grading_engine.checks.slip_rules import ruled_out

SCALED = "constant-factor"
NEGATED = "sign-flipped"
ZEROS = "all-zeros"
DIAGNOSES = (SCALED, NEGATED, ZEROS)


def factor(got, expected, *, rtol: float, atol: float) -> float | None:
    """The c with got == c * expected (to rtol/atol) when it is not 1, else None."""
    if not (
        isinstance(got, torch.Tensor)
        and got.shape == expected.shape
        and got.is_floating_point()
        and expected.is_floating_point()
    ):
        return None
    want = expected.double().reshape(-1)
    have = got.double().reshape(-1)
    if not (torch.isfinite(want).all() and torch.isfinite(have).all()):
        return None
    nonzero = want[want.abs() > 10 * atol]
    if torch.unique(nonzero.abs()).numel() < 2:
        return None  # a constant answer: any constant output would fit
    c = float(have @ want / (want @ want))
    if math.isclose(c, 1.0, rel_tol=rtol) or not torch.allclose(
        have, c * want, rtol=rtol, atol=atol
    ):
        return None
    return c


def kind(c: float) -> str:
    if abs(c) < 1e-9:
        return ZEROS
    return NEGATED if math.isclose(c, -1.0, rel_tol=1e-6) else SCALED


def scaled(
    name: str, got, expected, *, rtol: float, atol: float, hidden: bool
) -> CheckResult | None:
    """The named mistake when a wrong answer is the answer times one number."""
    c = factor(got, expected, rtol=rtol, atol=atol)
    if c is None or ruled_out(diagnosis := kind(c)):
        return None
    if diagnosis == ZEROS:
        text = (
            "your output is all zeros where the answer is not: a tensor created "
            "with zeros and never filled in, or a product with one"
        )
    elif diagnosis == NEGATED:
        text = (
            "your output is the answer with its sign flipped: a minus sign is "
            "missing or one too many (a loss is MINUS the log-probability)"
        )
    else:
        inverse = f" (1 / {1 / c:.4g})" if abs(c) < 1 else ""
        text = (
            f"your output is the answer times {c:.4g}{inverse} everywhere: the "
            "computation is right up to one constant, so look for a scale, a "
            "normalisation or a unit the answer does not have (or one it has "
            "and yours lacks)"
        )
    return likely_mistake(name, text, diagnosis=diagnosis, hidden=hidden)


def agrees(got, expected, diagnosis: str, *, rtol: float, atol: float):
    """Whether one case's output fits a constant-factor mistake
    (checks.slip_rules): None where it is right, else whether it fits."""
    if diagnosis not in DIAGNOSES or not isinstance(got, torch.Tensor):
        return None
    if got.shape == expected.shape and torch.allclose(
        got.double(), expected.double(), rtol=rtol, atol=atol, equal_nan=True
    ):
        return None
    c = factor(got, expected, rtol=rtol, atol=atol)
    return c is not None and kind(c) == diagnosis
