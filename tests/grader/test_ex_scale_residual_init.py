"""scale-residual-init graded in-process: the solution passes, mistakes are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "scale-residual-init"
SPEC = yaml.safe_load(
    (
        Path(__file__).resolve().parents[2] / "content" / "exercises" / f"{SLUG}.yaml"
    ).read_text(encoding="utf-8")
)
SEEDS = (11, 2026, 7)


def grade(code: str, seed: int) -> list:
    module = load_harness(SLUG)
    namespace = {"__name__": "__submission__"}
    exec(compile(code, "<submission>", "exec"), namespace)  # noqa: S102
    fn = namespace[SPEC["entry_point"]]
    results = []
    for case in module.make_cases(seed):
        case = json.loads(json.dumps(case))
        data, tensors = module.run_case(fn, case)
        data = json.loads(json.dumps(data))
        plain = {k: t.contiguous().clone() for k, t in tensors.items()}
        tensors = st_load(st_save(plain)) if plain else {}
        results += module.check_case(case, data, tensors)
    return results


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_solution_passes(seed):
    results = grade(SPEC["solution"], seed)
    assert results and all(r.passed for r in results), [
        r.message for r in results if not r.passed
    ]
    assert any(r.hidden for r in results) and any(not r.hidden for r in results)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(
    "wrong", SPEC["wrong_solutions"], ids=lambda w: w["name"].replace(" ", "-")
)
def test_each_wrong_solution_is_named(wrong, seed):
    failed = [r for r in grade(wrong["code"], seed) if not r.passed]
    assert failed
    assert wrong["diagnosis"] in {r.diagnosis for r in failed}, [
        r.message for r in failed
    ]


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
