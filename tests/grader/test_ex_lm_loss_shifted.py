"""lm-loss-shifted graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "lm-loss-shifted"
SPEC = yaml.safe_load(
    (
        Path(__file__).resolve().parents[2] / "content" / "exercises" / f"{SLUG}.yaml"
    ).read_text(encoding="utf-8")
)
SEEDS = (11, 2026)


def grade_fn(fn, seed: int) -> list:
    """Grade in-process; data crosses JSON and safetensors as with the runner."""
    module = load_harness(SLUG)
    results = []
    for case in module.make_cases(seed):
        case = json.loads(json.dumps(case))
        data, tensors = module.run_case(fn, case)
        data = json.loads(json.dumps(data))
        plain = {k: t.contiguous().clone() for k, t in tensors.items()}
        tensors = st_load(st_save(plain)) if plain else {}
        results += module.check_case(case, data, tensors)
    return results


def grade(code: str, seed: int) -> list:
    namespace = {"__name__": "__submission__"}
    exec(compile(code, "<submission>", "exec"), namespace)  # noqa: S102
    return grade_fn(namespace[SPEC["entry_point"]], seed)


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
