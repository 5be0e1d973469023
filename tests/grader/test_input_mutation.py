"""A learner's function that changes a tensor it was given fails, in every exercise.

The child calls the learner through an InputWatch (grading_engine.harness.
inputs) and the parent turns what it recorded into a failed check that
names the argument (grading_engine.checks.tensors.input_changes).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
import yaml
from grading_engine.checks.tensors import MUTATED_INPUT, input_changes
from grading_engine.exercises.base import harness_slugs, load_harness
from grading_engine.harness.inputs import CHANGED_INPUTS, InputWatch, run_watched

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


def test_models_parameters_and_containers_are_not_watched():
    # Exercises such as tie-weights or clip-grad-norm are about changing these.
    model = torch.nn.Linear(3, 3)
    param = torch.nn.Parameter(torch.zeros(2))
    grads = [torch.zeros(2)]

    def changes_everything(model, param, grads):
        with torch.no_grad():
            model.weight.zero_()
            param.add_(1.0)
        grads[0].add_(1.0)

    watch = InputWatch(changes_everything)
    watch(model, param, grads)
    assert watch.report() == [] and watch.watched == 0


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


@pytest.mark.parametrize("slug", harness_slugs())
def test_every_exercise_that_hands_over_tensors_judges_their_change(
    slug, tokenizer_offline
):
    # The reference changes nothing; a recorded change fails exactly once
    # per case, whichever judge the exercise ends in.
    module = load_harness(slug)
    fn = _solution(slug)
    for case in module.make_cases(1)[:2]:
        case = json.loads(json.dumps(case))
        watch = InputWatch(fn)
        data, tensors = module.run_case(watch, case)
        assert watch.report() == [], f"{slug}'s reference changes its inputs"
        if not watch.watched:
            continue  # no tensor argument (numbers, a model, a list)
        data[CHANGED_INPUTS] = [{"arg": "x", "kind": "values", "changed": 1}]
        named = [
            r
            for r in module.check_case(case, data, tensors)
            if r.diagnosis == MUTATED_INPUT
        ]
        assert len(named) == 1 and not named[0].passed, slug


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
