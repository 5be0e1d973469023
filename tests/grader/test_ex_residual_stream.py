"""residual-stream graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import torch
from grading_engine.exercises.base import load_harness
from grading_engine.reference import build_model

from tests.grader.inprocess import (
    grade_fn_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "residual-stream"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def _solution():
    namespace = {}
    exec(SPEC["solution"], namespace)  # noqa: S102
    return namespace["residual_stream"]


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = MODULE.make_cases(SEEDS[0]), MODULE.make_cases(SEEDS[1])
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]
    # and the modules built from a visible case are the same every time
    x1, pairs1 = MODULE.inputs(a[0])
    x2, pairs2 = MODULE.inputs(b[0])
    assert torch.equal(x1, x2)
    assert torch.equal(pairs1[0][1][0].weight, pairs2[0][1][0].weight)


def test_the_solution_is_the_reference_models_stream():
    """On GPT-2's own blocks it gives the stream the reference traces."""
    model = build_model("tiny")
    idx = torch.tensor([[1, 2, 3, 4]])
    pairs = [
        pair
        for block in model.transformer.h
        for pair in ((block.ln_1, block.attn), (block.ln_2, block.mlp))
    ]
    with torch.no_grad():
        x = model._embed(idx)
        last = f"h.{len(model.transformer.h) - 1}.mlp"
        expected = model.forward_trace(idx)[last]
        got = _solution()(x, pairs)
    assert torch.allclose(got, expected, atol=1e-5)


def test_a_stream_that_stops_early_fails_the_hidden_cases_too():
    def first_block_only(x, sublayers):
        return _solution()(x, sublayers[:2])

    failed = [r for r in grade_fn_in_process(SLUG, first_block_only, 3) if not r.passed]
    assert failed and any(not r.hidden for r in failed)
