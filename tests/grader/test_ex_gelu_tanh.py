"""gelu-tanh graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import torch
from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "gelu-tanh"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)

grade = partial(grade_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_the_tolerance_separates_the_two_gelus():
    """The exercise is only meaningful if exact GELU fails and tanh passes."""
    import torch.nn.functional as F

    x = torch.linspace(-6, 6, 241)
    gap = (F.gelu(x) - F.gelu(x, approximate="tanh")).abs().max().item()
    module = load_harness(SLUG)
    assert gap > 10 * (module.ATOL + module.RTOL * 3.0)  # |gelu| < 3 where they part


def test_a_missing_half_is_named():
    code = SPEC["solution"].replace("return 0.5 * x", "return x")
    assert code != SPEC["solution"]
    failed = [r for r in grade(code, 3) if not r.passed]
    assert "missing-half" in {r.diagnosis for r in failed}


def test_hidden_cases_change_with_the_seed():
    module = load_harness(SLUG)
    a, b = ([c for c in module.make_cases(s) if c["hidden"]] for s in SEEDS[:2])
    assert a and a != b
