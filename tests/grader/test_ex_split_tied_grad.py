"""split-tied-grad graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import torch

from tests.grader.inprocess import (
    grade_fn_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "split-tied-grad"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026)

# Straight from run_case to check_case: no JSON/safetensors round trip.
grade_fn = partial(grade_fn_in_process, SLUG, wire=False)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_a_pair_is_required():
    def one_tensor(model, idx, targets):
        return model.transformer.wte.weight.detach().clone()

    failed = [r for r in grade_fn(one_tensor, seed=3) if not r.passed]
    assert failed and all("tuple of two tensors" in r.message for r in failed)


def test_the_model_stays_tied_after_the_solution():
    from grading_engine.reference import build_model

    namespace = {}
    exec(compile(SPEC["solution"], "<submission>", "exec"), namespace)  # noqa: S102
    model = build_model("tiny")
    idx = torch.tensor([[1, 2, 3]])
    emb, head = namespace["split_tied_grad"](model, idx, idx)
    assert model.lm_head.weight is model.transformer.wte.weight
    # The lookup touches only rows of tokens in idx; the head touches all.
    assert int((emb.abs().sum(1) > 0).sum()) == 3
    assert int((head.abs().sum(1) > 0).sum()) == model.config.vocab_size
