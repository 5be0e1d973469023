"""scale-residual-init graded in-process: the solution passes, mistakes are named."""

from __future__ import annotations

from functools import partial

from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "scale-residual-init"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)

grade = partial(grade_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_rescaling_in_place_is_accepted():
    """Multiplying the 0.02 draws by the factor is as right as redrawing."""
    code = """
import math
import torch

def scale_residual_init(model):
    with torch.no_grad():
        for block in model.transformer.h:
            block.attn.c_proj.weight *= 1 / math.sqrt(2 * model.config.n_layer)
            block.mlp.c_proj.weight *= 1 / math.sqrt(2 * model.config.n_layer)
"""
    results = grade(code, 5)
    assert all(r.passed for r in results), [r.message for r in results]


def test_a_no_op_fails_as_not_rescaled():
    code = "def scale_residual_init(model):\n    pass\n"
    failed = [r for r in grade(code, 5) if not r.passed]
    assert failed
    assert {r.diagnosis for r in failed} & {"not-rescaled"}


def test_scaling_c_fc_too_is_named():
    code = SPEC["solution"].replace(
        "(block.attn.c_proj, block.mlp.c_proj)",
        "(block.attn.c_proj, block.mlp.c_proj, block.mlp.c_fc)",
    )
    assert code != SPEC["solution"]
    failed = [r for r in grade(code, 5) if not r.passed]
    assert "scaled-other-weights" in {r.diagnosis for r in failed}


def test_hidden_cases_change_with_the_seed():
    module = load_harness(SLUG)
    a, b = ([c for c in module.make_cases(s) if c["hidden"]] for s in SEEDS[:2])
    assert a and a != b
