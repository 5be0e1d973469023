"""clip-grad-norm graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import torch
from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_fn_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "clip-grad-norm"
SEEDS = (11, 2026)

grade_fn = partial(grade_fn_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_a_hidden_case_has_a_parameter_without_gradient():
    module = load_harness(SLUG)
    cases = module.make_cases(4)
    assert any(c["hidden"] and c.get("none") for c in cases)


def test_the_calm_case_leaves_gradients_untouched():
    module = load_harness(SLUG)
    case = next(c for c in module.make_cases(1) if "calm" in c["name"])
    total, clipped = module.reference(case)
    assert total < case["max_norm"]
    params = module.inputs(case)
    for i, g in clipped.items():
        assert torch.equal(g, params[i].grad)


def test_torch_clip_grad_norm_passes():
    def with_torch(params, max_norm):
        return torch.nn.utils.clip_grad_norm_(params, max_norm)

    results = grade_fn(with_torch, seed=8)
    assert all(r.passed for r in results), [r.message for r in results if not r.passed]


def test_clearing_the_gradients_is_named_plainly():
    def clears(parameters, max_norm):
        for p in parameters:
            p.grad = None
        return 1.0

    failed = [r for r in grade_fn(clears, 3) if not r.passed]
    assert any(".grad is None" in r.message for r in failed), [
        r.message for r in failed
    ]


def test_every_draw_has_a_norm_just_below_at_and_just_above_max_norm():
    module = load_harness(SLUG)
    for seed in range(50):
        edges = {}
        for case in module.make_cases(seed):
            if "ratio" in case and case["name"].startswith("hidden: total norm"):
                grads = [p.grad for p in module.inputs(case) if p.grad is not None]
                total = float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads)))
                edges[case["name"]] = total / case["max_norm"]
        below, at, above = sorted(edges.values())
        assert 0.85 < below < 0.999 and abs(at - 1) < 1e-6 and 1.001 < above < 1.15
