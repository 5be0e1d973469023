"""weight-layout-logits in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_fn_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "weight-layout-logits"
SEEDS = (11, 2026)

# Straight from run_case to check_case: no JSON/safetensors round trip.
grade_fn = partial(grade_fn_in_process, SLUG, wire=False)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_every_attempt_has_a_hidden_square_case_of_each_layout():
    module = load_harness(SLUG)
    for seed in SEEDS:
        square = {c["layout"] for c in module.make_cases(seed) if c["V"] == c["d"]}
        assert square == {"out_in", "in_out"}


def test_a_shape_guess_passes_the_visible_cases_and_fails_a_hidden_one():
    def guess(x, weight, layout):
        if weight.shape[0] == x.shape[-1]:
            return x @ weight
        return x @ weight.T

    results = grade_fn(guess, seed=4)
    assert all(r.passed for r in results if not r.hidden)
    assert any(r.hidden and not r.passed for r in results)
