"""induction-scores graded in-process: the solution passes, each wrong one is named."""

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

SLUG = "induction-scores"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

grade = partial(grade_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_the_uniform_baseline_is_the_lessons_0_027():
    case = MODULE.make_cases(0)[0]
    maps, period = MODULE.inputs(case)
    score = MODULE.reference(maps, period)
    assert score.shape == (1, 1) and round(float(score), 3) == 0.027
    # 1/(i+1) averaged over the repeat's queries, as the lesson computes it
    expected = (1.0 / torch.arange(26, 51, dtype=torch.float64)).mean()
    assert abs(float(score) - float(expected)) < 1e-6


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = MODULE.make_cases(SEEDS[0]), MODULE.make_cases(SEEDS[1])
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_every_draw_holds_a_sequence_where_half_is_not_the_period():
    for seed in range(30):
        assert any(c["hidden"] and c["repeats"] == 3 for c in MODULE.make_cases(seed))


def test_a_previous_token_score_is_named():
    code = SPEC["solution"].replace("i - period + 1", "i - 1")
    assert code != SPEC["solution"]
    failed = [r for r in grade(code, 3) if not r.passed]
    assert "previous-token-not-induction" in {r.diagnosis for r in failed}


def test_a_hand_built_induction_head_scores_one():
    """The lesson's point: a real induction pattern stands far above 0.027."""
    period, t = 8, 16
    maps = torch.zeros(1, 1, t, t)
    maps[0, 0, 0, 0] = 1.0
    for i in range(1, t):
        maps[0, 0, i, i - period + 1 if i >= period else 0] = 1.0
    namespace = {}
    exec(SPEC["solution"], namespace)  # noqa: S102
    assert float(namespace["induction_scores"](maps, period)) == 1.0
