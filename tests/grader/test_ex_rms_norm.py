"""rms-norm graded in-process: the solution passes, each wrong one is named."""

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

SLUG = "rms-norm"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

grade = partial(grade_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_the_reference_is_pytorchs_rmsnorm():
    for case in MODULE.make_cases(5):
        x, weight, eps = MODULE.inputs(case)
        norm = torch.nn.RMSNorm(x.shape[-1], eps=eps)
        with torch.no_grad():
            norm.weight.copy_(weight)
            expected = norm(x)
        assert torch.allclose(
            MODULE.reference(x, weight, eps), expected, rtol=1e-4, atol=1e-5
        )


def test_nn_rmsnorm_passes_as_a_learner_answer():
    code = (
        "import torch.nn.functional as F\n"
        "def rms_norm(x, weight, eps):\n"
        "    return F.rms_norm(x, (x.shape[-1],), weight, eps)\n"
    )
    assert all(r.passed for r in grade(code, 3))


def test_a_hard_coded_eps_fails_a_hidden_case_only():
    code = SPEC["solution"].replace("mean_square + eps", "mean_square + 1e-5")
    assert code != SPEC["solution"]
    failed = [r for r in grade(code, 3) if not r.passed]
    assert failed and all(r.hidden for r in failed)


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = MODULE.make_cases(SEEDS[0]), MODULE.make_cases(SEEDS[1])
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]
