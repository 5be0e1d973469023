"""layer-norm graded in-process: the solution passes, each wrong one is named."""

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

SLUG = "layer-norm"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)

grade = partial(grade_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_a_hard_coded_eps_is_named():
    code = SPEC["solution"].replace("var + eps", "var + 1e-5")
    assert code != SPEC["solution"]
    failed = [r for r in grade(code, 3) if not r.passed]
    assert "layernorm-eps" in {r.diagnosis for r in failed}
    assert all(r.hidden for r in failed)  # the visible cases use eps=1e-5


def test_the_solution_agrees_with_nn_layernorm_on_gpt2_width():
    module = load_harness(SLUG)
    case = next(c for c in module.make_cases(1) if c["name"] == "d=768, eps=1e-5")
    x, weight, bias, eps = module.inputs(case)
    ln = torch.nn.LayerNorm(768, eps=eps)
    with torch.no_grad():
        ln.weight.copy_(weight)
        ln.bias.copy_(bias)
        expected = ln(x)
    namespace = {}
    exec(SPEC["solution"], namespace)  # noqa: S102
    assert torch.allclose(
        namespace["layer_norm"](x, weight, bias, eps),
        expected,
        rtol=module.RTOL,
        atol=module.ATOL,
    )


def test_hidden_cases_change_with_the_seed():
    module = load_harness(SLUG)
    a, b = ([c for c in module.make_cases(s) if c["hidden"]] for s in SEEDS[:2])
    assert a and a != b
