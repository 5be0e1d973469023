"""logits-match graded in-process: the solution passes, each wrong one is
named, and every draw has max_abs exactly at, just below and just above atol."""

from __future__ import annotations

from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "logits-match"
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_every_draw_puts_max_abs_at_just_below_and_just_above_atol():
    for seed in range(20):
        found = {}
        for case in MODULE.make_cases(seed):
            if case["kind"] != "boundary":
                continue
            ours, theirs = MODULE.inputs(case)
            # exact in float32 too: the learner's own subtraction sees the same
            max32 = (ours - theirs).abs().max().item()
            report = MODULE.reference(ours, theirs, case["atol"])
            assert report["max_abs"] == max32
            found[case["step"]] = (report["max_abs"] - case["atol"], report["match"])
        assert found[0] == (0.0, True), seed
        assert found[-1][0] < 0 and found[-1][1] is True, seed
        assert found[1][0] > 0 and found[1][1] is False, seed


def test_a_wrong_max_abs_is_not_blamed_on_the_match_boundary():
    """Probabilities or a mean make max_abs small, so `match` is wrong at the
    just-above case too; that is the max_abs mistake, not allclose's rtol."""
    boundary = {"tolerance-boundary", "allclose-rtol"}
    for wrong in load_spec(SLUG)["wrong_solutions"]:
        named = {
            r.diagnosis
            for seed in SEEDS[:2]
            for r in grade_in_process(SLUG, wrong["code"], seed)
            if not r.passed and r.diagnosis
        }
        assert named & boundary <= {wrong["diagnosis"]}, (wrong["name"], named)
