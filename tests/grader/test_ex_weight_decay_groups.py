"""weight-decay-groups graded in-process: the solution passes, wrong ones named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "weight-decay-groups"
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


def test_the_tied_reference_spares_the_shared_head_once():
    module = load_harness(SLUG)
    model = module.build({"gpt": "tiny", "tied": True})
    decay, no_decay = module.reference(model)
    assert "lm_head.weight" not in decay | no_decay
    assert "transformer.wte.weight" in no_decay
    assert all(n.endswith("weight") for n in decay)
    assert len(decay) == 4 * model.config.n_layer


def test_random_modules_tie_whichever_is_listed_first():
    module = load_harness(SLUG)
    for seed in range(6):
        for case in module.make_cases(seed):
            if case.get("layers") and case.get("tie"):
                model = module.build(case)
                decay, no_decay = module.reference(model)
                names = {n for n, _ in model.named_parameters()}
                assert decay | no_decay == names and not decay & no_decay


def test_returning_tensors_instead_of_names_is_explained():
    def tensors(model):
        return list(model.parameters()), []

    failed = [r for r in grade_fn(tensors, seed=1) if not r.passed]
    assert failed and "NAMES" in failed[0].message
