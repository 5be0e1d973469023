"""top-p-filter graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import torch
from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_fn_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "top-p-filter"
SEEDS = (11, 2026)

grade_fn = partial(grade_fn_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_p_keeps_a_margin_from_every_cumulative_probability():
    module = load_harness(SLUG)
    for seed in range(5):
        for case in module.make_cases(seed):
            logits, p = module.inputs(case)
            _, cum = module._cumulative(logits)
            assert bool(((cum - p).abs() > module.MARGIN).all())


def test_the_top_token_always_survives_and_peaked_rows_keep_few():
    module = load_harness(SLUG)
    logits = torch.tensor([[10.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    kept = module.keep_mask(logits, 0.5)
    assert kept[0].tolist() == [True, False, False, False]
    assert int(kept[1].sum()) == 2  # 0.25 + 0.25 reaches 0.5: two of four


def test_a_forged_all_minus_inf_answer_fails():
    def nothing(logits, p):
        return torch.full_like(logits, float("-inf"))

    assert not all(r.passed for r in grade_fn(nothing, seed=3))


def test_an_unfiltered_result_is_not_mistaken_for_top_k():
    def forgot_the_result(logits, p):
        logits.masked_fill(logits < 0, float("-inf"))  # result dropped
        return logits

    failed = [r for r in grade_fn(forgot_the_result, 3) if not r.passed]
    assert failed
    assert "top-k-not-top-p" not in {r.diagnosis for r in failed}
