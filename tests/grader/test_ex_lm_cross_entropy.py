"""lm-cross-entropy graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import math
from functools import partial

import torch
import torch.nn.functional as F
from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_fn_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "lm-cross-entropy"
SEEDS = (11, 2026)

# Straight from run_case to check_case: no JSON/safetensors round trip.
grade_fn = partial(grade_fn_in_process, SLUG, wire=False)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_a_hard_coded_uniform_loss_fails_the_hidden_cases():
    def uniform(logits, targets):
        return torch.tensor(math.log(logits.shape[-1]))

    results = grade_fn(uniform, seed=3)
    assert any(r.hidden and not r.passed for r in results)


def test_per_position_losses_are_told_to_reduce():
    def unreduced(logits, targets):
        return F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")

    failed = [r for r in grade_fn(unreduced, seed=5) if not r.passed]
    assert "not-reduced" in {r.diagnosis for r in failed}


def test_the_hidden_extreme_case_really_breaks_the_naive_log():
    module = load_harness(SLUG)
    case = next(c for c in module.make_cases(9) if c.get("worst_targets"))
    logits, targets = module.inputs(case)
    naive = -torch.log(torch.softmax(logits, -1).gather(-1, targets.unsqueeze(-1)))
    assert not torch.isfinite(naive.mean())
    assert torch.isfinite(module.reference(logits, targets))
