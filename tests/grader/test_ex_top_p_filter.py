"""top-p-filter graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grader.exercises.base import load_harness

SLUG = "top-p-filter"
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


def test_p_keeps_a_margin_from_every_cumulative_probability():
    module = load_harness(SLUG)
    for seed in range(5):
        for case in module.make_cases(seed):
            logits, p = module.inputs(case)
            _, cum = module._cumulative(logits)
            assert bool(((cum - p).abs() > module.MARGIN).all())


def test_the_top_token_always_survives_and_peaked_rows_keep_few():
    module = load_harness(SLUG)
    logits = torch.tensor([[10.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    kept = module.keep_mask(logits, 0.5)
    assert kept[0].tolist() == [True, False, False, False]
    assert int(kept[1].sum()) == 2  # 0.25 + 0.25 reaches 0.5: two of four


def test_a_forged_all_minus_inf_answer_fails():
    def nothing(logits, p):
        return torch.full_like(logits, float("-inf"))

    assert not all(r.passed for r in grade_fn(nothing, seed=3))
