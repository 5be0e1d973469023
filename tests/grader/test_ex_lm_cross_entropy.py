"""lm-cross-entropy graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "lm-cross-entropy"
SPEC = yaml.safe_load(
    (
        Path(__file__).resolve().parents[2] / "content" / "exercises" / f"{SLUG}.yaml"
    ).read_text(encoding="utf-8")
)
SEEDS = (11, 2026)


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


def grade_fn(fn, seed: int) -> list:
    module = load_harness(SLUG)
    results = []
    for case in module.make_cases(seed):
        data, tensors = module.run_case(fn, case)
        results += module.check_case(case, data, tensors)
    return results
