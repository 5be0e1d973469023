"""mlp-forward graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "mlp-forward"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)

grade = partial(grade_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_a_dropped_bias_is_named():
    code = SPEC["solution"].replace("c_fc_bias)", "None)")
    assert code != SPEC["solution"]
    failed = [r for r in grade(code, 3) if not r.passed]
    assert "missing-bias" in {r.diagnosis for r in failed}


def test_hidden_cases_change_with_the_seed():
    module = load_harness(SLUG)
    a, b = ([c for c in module.make_cases(s) if c["hidden"]] for s in SEEDS[:2])
    assert a and a != b
