"""weight-decay-groups graded in-process: the solution passes, wrong ones named."""

from __future__ import annotations

from functools import partial

from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_fn_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "weight-decay-groups"
SEEDS = (11, 2026)

grade_fn = partial(grade_fn_in_process, SLUG)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


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
