"""lm-loss-shifted graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import torch
from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_fn_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "lm-loss-shifted"
SEEDS = (11, 2026)

grade_fn = partial(grade_fn_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_a_per_position_loss_is_told_to_reduce():
    def unreduced(logits, idx):
        V = logits.size(-1)
        return torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, V), idx[:, 1:].reshape(-1), reduction="none"
        )

    failed = [r for r in grade_fn(unreduced, seed=5) if not r.passed]
    assert "not-reduced" in {r.diagnosis for r in failed}


def test_hidden_cases_have_several_rows_so_view_fails():
    module = load_harness(SLUG)
    for case in module.make_cases(7):
        if case["hidden"]:
            logits, _ = module.inputs(case)
            assert logits.shape[0] > 1 and not logits[:, :-1].is_contiguous()


def test_every_draw_has_rows_of_two_tokens():
    from grading_engine.exercises.base import load_harness

    module = load_harness("lm-loss-shifted")
    for seed in range(50):
        shapes = [c["shape"] for c in module.make_cases(seed) if c["hidden"]]
        assert any(len(s) == 3 and s[1] == 2 and s[0] > 1 for s in shapes), seed
