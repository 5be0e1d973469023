"""resize-tied-vocab in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

from functools import partial

import torch

from tests.grader.inprocess import (
    grade_fn_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "resize-tied-vocab"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026)

# Straight from run_case to check_case: no JSON/safetensors round trip.
grade_fn = partial(grade_fn_in_process, SLUG, wire=False)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


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
    from grading_engine.reference import build_model

    namespace = {}
    exec(compile(SPEC["solution"], "<submission>", "exec"), namespace)  # noqa: S102
    model = build_model("tiny")
    namespace["resize_vocab"](model, 128)
    assert model.lm_head.weight is model.transformer.wte.weight
    assert (
        sum(p.numel() for p in model.parameters())
        == sum(p.numel() for p in build_model("tiny").parameters()) + (128 - 97) * 16
    )


def test_every_draw_grows_one_config_by_exactly_one_row():
    from grading_engine.exercises.base import load_harness
    from grading_engine.reference import get_config

    module = load_harness(SLUG)
    for seed in range(50):
        edges = [
            c
            for c in module.make_cases(seed)
            if c["hidden"] and c["new_vocab"] == get_config(c["config"]).vocab_size + 1
        ]
        assert edges, seed
