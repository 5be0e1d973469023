"""weight-layout-logits in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "weight-layout-logits"
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


def test_every_attempt_has_a_hidden_square_case_of_each_layout():
    module = load_harness(SLUG)
    for seed in SEEDS:
        square = {c["layout"] for c in module.make_cases(seed) if c["V"] == c["d"]}
        assert square == {"out_in", "in_out"}


def test_a_shape_guess_passes_the_visible_cases_and_fails_a_hidden_one():
    def guess(x, weight, layout):
        if weight.shape[0] == x.shape[-1]:
            return x @ weight
        return x @ weight.T

    results = grade_fn(guess, seed=4)
    assert all(r.passed for r in results if not r.hidden)
    assert any(r.hidden and not r.passed for r in results)


def grade_fn(fn, seed: int) -> list:
    module = load_harness(SLUG)
    results = []
    for case in module.make_cases(seed):
        data, tensors = module.run_case(fn, case)
        results += module.check_case(case, data, tensors)
    return results
