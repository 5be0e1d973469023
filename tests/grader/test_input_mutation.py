"""A learner's function that changes a tensor it was given fails, in every exercise.

The child calls the learner through an InputWatch (grading_engine.harness.
inputs) and the parent turns what it recorded into a failed check that
names the argument (grading_engine.checks.in_place.input_changes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
import yaml
from grading_engine.checks.in_place import (
    MODEL_CHANGE_KINDS,
    MODEL_CHANGED,
    MODEL_LEFT_UNTIED,
    MUTATED_INPUT,
    input_changes,
    model_changes,
    shared_checks,
)
from grading_engine.exercises.base import harness_slugs, load_harness
from grading_engine.harness.inputs import (
    CHANGED_INPUTS,
    CHANGED_MODULES,
    InputWatch,
    run_watched,
)

from tests.grader.inprocess import grade_in_process, one_thread  # noqa: F401

EXERCISES = Path(__file__).resolve().parents[2] / "content" / "exercises"


def _watched(fn, *args, **kwargs):
    watch = InputWatch(fn)
    watch(*args, **kwargs)
    return watch.report()


def test_an_untouched_input_leaves_no_record():
    x = torch.randn(3, 4)
    assert _watched(lambda x: (x - x.mean()).softmax(-1), x) == []


def test_changed_values_are_counted_under_the_learners_own_name():
    def centre(activations, eps):
        activations -= activations.mean(dim=-1, keepdim=True)
        return activations

    (record,) = _watched(centre, torch.randn(2, 5), 1e-5)
    assert record == {"arg": "activations", "numel": 10, "kind": "values"} | {
        "changed": 10
    }


def test_a_nan_left_in_place_is_not_a_change_but_a_new_one_is():
    x = torch.tensor([float("nan"), 1.0, 2.0])
    assert _watched(lambda x: x + 1, x) == []
    (record,) = _watched(lambda x: x.masked_fill_(x > 1.5, float("nan")), x)
    assert record["changed"] == 1


def test_a_shape_changed_in_place_is_reported():
    (record,) = _watched(lambda x: x.unsqueeze_(0), torch.zeros(2, 3))
    assert record["kind"] == "shape" and "[1, 2, 3]" in record["after"]


def test_an_in_place_write_that_keeps_the_values_still_counts():
    # Autograd refuses a backward through a tensor whose version moved.
    (record,) = _watched(lambda x: x.mul_(1.0), torch.randn(4))
    assert record["kind"] == "written"


def test_a_table_too_big_to_copy_is_checked_by_its_digest(monkeypatch):
    from grading_engine.harness import inputs

    monkeypatch.setattr(inputs, "_COPY_LIMIT", 8)
    table = torch.randn(4, 5)
    assert _watched(lambda t: t.sum(), table) == []

    def sneaky(t):  # .data has a version counter of its own
        t.data[0, 0] += 1.0
        return t

    (record,) = _watched(sneaky, table)
    assert record["kind"] == "values" and record["changed"] is None


def test_parameters_are_not_watched_but_tensors_in_containers_are():
    # clip-grad-norm is about changing Parameters; a state dict or a KV cache
    # handed over in a dict or list is the caller's, like any tensor.
    param = torch.nn.Parameter(torch.zeros(2))
    state = {"wte": torch.zeros(3), "cache": [(torch.zeros(2), torch.zeros(2))]}

    def changes_everything(param, state):
        with torch.no_grad():
            param.add_(1.0)
        state["wte"].add_(1.0)
        state["cache"][0][1].fill_(2.0)

    watch = InputWatch(changes_everything)
    watch(param, state)
    assert [r["arg"] for r in watch.report()] == ["state['wte']"]
    assert watch.watched == 1  # the cache sits three levels down: not looked at


def test_a_container_bigger_than_the_budget_is_skipped(monkeypatch):
    from grading_engine.harness import inputs

    monkeypatch.setattr(inputs, "_CONTAINER_BUDGET", 5)
    tensors = [torch.zeros(4), torch.zeros(4)]
    watch = InputWatch(lambda ts: [t.add_(1) for t in ts])
    watch(tensors)
    assert [r["arg"] for r in watch.report()] == ["ts[0]"]


def _tied_model():
    model = torch.nn.Module()
    model.wte = torch.nn.Embedding(5, 3)
    model.head = torch.nn.Linear(3, 5, bias=False)
    model.head.weight = model.wte.weight
    return model


def _module_records(fn, *args):
    watch = InputWatch(fn)
    watch(*args)
    return watch.report_modules()


def test_a_model_left_as_it_was_leaves_no_record():
    model = _tied_model()

    def reads(model):
        model.zero_grad()
        model.head(model.wte(torch.tensor([1, 2]))).sum().backward()  # .grad only
        return sum(p.numel() for p in model.parameters())

    assert _module_records(reads, model) == []


def test_a_head_left_untied_is_named_with_both_parameters():
    model = _tied_model()

    def unties(model):
        model.head.weight = torch.nn.Parameter(model.wte.weight.detach().clone())

    (record,) = _module_records(unties, model)
    assert record["kind"] == "untied" and record["arg"] == "model"
    assert record["names"] == ["wte.weight and head.weight"]


def test_replaced_revalued_and_frozen_parameters_are_told_apart():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))

    def meddles(model):
        model[0].bias = torch.nn.Parameter(model[0].bias.detach().clone())
        with torch.no_grad():
            model[1].weight.data.mul_(2.0)  # .data: no version bump
        model[1].bias.requires_grad_(False)

    kinds = {r["kind"]: r["names"] for r in _module_records(meddles, model)}
    assert kinds == {
        "replaced": ["0.bias"],
        "values": ["1.weight"],
        "requires_grad": ["1.bias"],
    }


def test_a_big_model_is_compared_on_samples(monkeypatch):
    from grading_engine.harness import inputs

    monkeypatch.setattr(inputs, "_COPY_LIMIT", 4)
    monkeypatch.setattr(inputs, "_SAMPLE", 3)
    model = torch.nn.Linear(4, 4)  # weight: every 6th of 16 values, bias: 2nd
    assert _module_records(lambda m: m(torch.ones(4)), model) == []

    def nudges(m):
        m.weight.data[0, 0] += 1.0

    def scales(m):
        m.bias.data *= 2.0

    assert [r["kind"] for r in _module_records(nudges, model)] == ["values"]
    (record,) = _module_records(scales, model)
    assert record["kind"] == "values" and record["names"] == ["bias"]


def test_the_parents_model_check_names_the_tie_and_respects_what_is_allowed():
    data = {
        CHANGED_MODULES: [
            {"arg": "model", "kind": "untied", "names": ["a and b"], "count": 1},
            {"arg": "model", "kind": "replaced", "names": ["c"], "count": 3},
        ]
    }
    (check,) = model_changes("case", data, hidden=False)
    assert not check.passed and check.diagnosis == MODEL_LEFT_UNTIED
    assert "`a and b`" in check.message and "tied" in check.message
    assert "`c` and 2 more" in check.message
    (check,) = model_changes("case", data, allowed=frozenset({"untied"}), hidden=False)
    assert check.diagnosis == MODEL_CHANGED and "`a and b`" not in check.message
    assert model_changes("case", data, allowed=MODEL_CHANGE_KINDS, hidden=False) == []
    assert model_changes("case", {}, hidden=False) == []


def test_it_still_records_when_the_function_raises_after_the_change():
    def breaks(x):
        x.zero_()
        raise ValueError("late")

    watch = InputWatch(breaks)
    with pytest.raises(ValueError):
        watch(torch.ones(3))
    assert [r["arg"] for r in watch.report()] == ["x"]


def test_the_parents_check_names_the_argument_and_says_why():
    data = {CHANGED_INPUTS: [{"arg": "scores", "kind": "values", "changed": 6}]}
    data[CHANGED_INPUTS][0]["numel"] = 50
    (check,) = input_changes("case", data, hidden=False)
    assert not check.passed and check.diagnosis == MUTATED_INPUT
    assert "`scores`" in check.message and "6 of the 50" in check.message
    assert "autograd" in check.message and "in place" in check.message
    assert input_changes("case", {}, hidden=False) == []


def test_a_malformed_record_still_fails():
    for forged in ("x", [1, 2], [{"kind": "?"}]):
        (check,) = input_changes("case", {CHANGED_INPUTS: forged}, hidden=True)
        assert not check.passed and check.diagnosis == MUTATED_INPUT


def _solution(slug: str):
    spec = yaml.safe_load((EXERCISES / f"{slug}.yaml").read_text("utf-8"))
    namespace = {"__name__": "__submission__"}
    exec(compile(spec["solution"], "<submission>", "exec"), namespace)  # noqa: S102
    return namespace[spec["entry_point"]]


@pytest.fixture(scope="module")
def tokenizer_offline():
    from grading_engine.reference.tokenizer import default_cache_dir, get_encoding

    get_encoding()
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(default_cache_dir())
    yield
    if before is None:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)
    else:
        os.environ["TIKTOKEN_CACHE_DIR"] = before


def _judged(module, case, data, tensors):
    """What the grader reports for a case: the harness's checks, then the
    shared judges (grading_engine.grading._check)."""
    results = module.check_case(case, data, tensors)
    return [*results, *shared_checks(module, case, data, results)]


@pytest.mark.parametrize("slug", harness_slugs())
def test_every_exercise_judges_changed_inputs_and_models(slug, tokenizer_offline):
    # The reference changes nothing it should not; a recorded change fails
    # exactly once per case, whichever judge the exercise ends in.
    module = load_harness(slug)
    allowed = getattr(module, "MODEL_CHANGES", frozenset())
    fn = _solution(slug)
    for case in module.make_cases(1)[:2]:
        case = json.loads(json.dumps(case))
        watch = InputWatch(fn)
        data, tensors = module.run_case(watch, case)
        assert watch.report() == [], f"{slug}'s reference changes its inputs"
        left = [r for r in watch.report_modules() if r["kind"] not in allowed]
        assert left == [], f"{slug}'s reference leaves its model changed"
        data[CHANGED_INPUTS] = [{"arg": "x", "kind": "values", "changed": 1}]
        data[CHANGED_MODULES] = [
            {"arg": "model", "kind": "untied", "names": ["a and b"], "count": 1}
        ]
        judged = _judged(module, case, data, tensors)
        named = [r for r in judged if r.diagnosis == MUTATED_INPUT]
        assert len(named) == 1 and not named[0].passed, slug
        untied = [r for r in judged if r.diagnosis == MODEL_LEFT_UNTIED]
        assert len(untied) == (0 if "untied" in allowed else 1), slug


@pytest.mark.parametrize(
    ("slug", "arg"),
    [
        ("causal-mask-weights", "scores"),
        ("layer-norm", "x"),
        ("lm-cross-entropy", "logits"),
    ],
)
def test_the_listed_in_place_bugs_fail_on_that_alone(slug, arg):
    spec = yaml.safe_load((EXERCISES / f"{slug}.yaml").read_text("utf-8"))
    (wrong,) = [w for w in spec["wrong_solutions"] if w["diagnosis"] == MUTATED_INPUT]
    failed = [r for r in grade_in_process(slug, wrong["code"], 5) if not r.passed]
    assert failed and {r.diagnosis for r in failed} == {MUTATED_INPUT}
    assert all(f"`{arg}`" in r.message for r in failed)


def test_run_watched_is_what_the_child_runs():
    module = load_harness("layer-norm")
    case = module.make_cases(1)[0]

    def centre(x, weight, bias, eps):
        x -= x.mean(dim=-1, keepdim=True)
        return x

    data, _ = run_watched(module, centre, case)
    assert [r["arg"] for r in data[CHANGED_INPUTS]] == ["x"]
