"""resize-tied-vocab in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "resize-tied-vocab"
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


def test_a_copy_in_place_is_named_copied_not_shared():
    import torch.nn as nn

    def copy_in_place(model, new_vocab_size):
        old = model.transformer.wte.weight.detach()
        extra = new_vocab_size - old.shape[0]
        rows = torch.cat([old, old.mean(0, keepdim=True).expand(extra, -1)])
        model.transformer.wte = nn.Embedding.from_pretrained(rows, freeze=False)
        model.lm_head = nn.Linear(old.shape[1], new_vocab_size, bias=False)
        with torch.no_grad():
            model.lm_head.weight.copy_(rows)

    failed = [r for r in grade_fn(copy_in_place, seed=2) if not r.passed]
    assert "copied-not-shared" in {r.diagnosis for r in failed}


def test_the_solution_leaves_one_shared_parameter():
    from grader.reference import build_model

    namespace = {}
    exec(compile(SPEC["solution"], "<submission>", "exec"), namespace)  # noqa: S102
    model = build_model("tiny")
    namespace["resize_vocab"](model, 128)
    assert model.lm_head.weight is model.transformer.wte.weight
    assert (
        sum(p.numel() for p in model.parameters())
        == sum(p.numel() for p in build_model("tiny").parameters()) + (128 - 97) * 16
    )


def grade_fn(fn, seed: int) -> list:
    module = load_harness(SLUG)
    results = []
    for case in module.make_cases(seed):
        data, tensors = module.run_case(fn, case)
        results += module.check_case(case, data, tensors)
    return results
