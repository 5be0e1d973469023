"""top-p-filter graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import pytest
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
            if case.get("kind") in ("exact", "all", "tiny"):
                continue  # on the boundary (or far past it) on purpose
            logits, p = module.inputs(case)
            _, cum = module._cumulative(logits)
            assert bool(((cum - p).abs() > module.MARGIN).all())


@pytest.mark.parametrize("seed", range(0, 200, 7))
def test_every_draw_tests_p_at_below_and_above_a_boundary(seed):
    module = load_harness(SLUG)
    by_kind = {c.get("kind"): c for c in module.make_cases(seed)}
    assert {"exact", "below", "above", "all", "tiny"} <= set(by_kind)
    logits, p = module.inputs(by_kind["exact"])
    _, cum = module._cumulative(logits)
    exact = (cum == p).any(-1)
    assert bool(exact.all())  # every row has a running total of exactly p
    # ... in float32 as well, as a learner computes it
    cum32 = torch.softmax(logits, -1).sort(-1, descending=True).values.cumsum(-1)
    assert bool((cum32 == p).any(-1).all())
    for kind, sign in (("below", -1), ("above", 1)):
        logits, p = module.inputs(by_kind[kind])
        _, cum = module._cumulative(logits)
        gaps = sign * (p - cum[0])
        assert bool(((gaps > 0) & (gaps <= 1.01 * module.NEAR)).any())
        assert bool(((cum - p).abs() > module.MARGIN).all())
    logits, p = module.inputs(by_kind["all"])
    assert p == 1.0 and bool(module.keep_mask(logits, p).all())
    logits, p = module.inputs(by_kind["tiny"])
    assert bool((module.keep_mask(logits, p).sum(-1) == 1).all())
    assert int((logits[0] == logits[0].max()).sum()) == 2  # a tie for the top


def test_tied_tokens_may_be_kept_in_any_order():
    module = load_harness(SLUG)
    logits = torch.tensor([[1.0, 1.0, 1.0, 1.0, float("-inf")]])
    expected = module.keep_mask(logits, 0.5)
    other = torch.tensor([[False, False, True, True, False]])
    assert module.same_nucleus(other, expected, logits)
    assert not module.same_nucleus(other | expected, expected, logits)
    assert module.same_nucleus(
        torch.tensor([[True, True, True, False, False]]),
        module.keep_mask(logits, 0.5, rule="keeps-past-p"),
        logits,
    )


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
