"""post-norm-block graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import torch
from grading_engine.exercises.base import load_harness
from grading_engine.reference import build_model

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "post-norm-block"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def _solution():
    namespace = {}
    exec(SPEC["solution"], namespace)  # noqa: S102
    return namespace["post_norm_block"]


def test_it_is_the_lessons_post_norm_wiring_and_not_the_block():
    """The lesson's doctest: the same weights wired post-norm differ."""
    block = build_model("tiny").transformer.h[0]
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        post = block.ln_1(x + block.attn(x))
        post = block.ln_2(post + block.mlp(post))
        got = _solution()(x, block)
        assert torch.equal(got, post)
        assert not torch.allclose(got, block(x), atol=1e-3)


def test_post_norm_output_is_standardised_per_position():
    case = MODULE.make_cases(0)[1]
    x, block = MODULE.inputs(case)
    with torch.no_grad():
        out = _solution()(x, block)
        # ln_2's output before its affine: mean 0, variance 1 per position
        z = (out - block.ln_2.bias) / block.ln_2.weight
    assert torch.allclose(z.mean(-1), torch.zeros(z.shape[:-1]), atol=1e-4)


def test_the_grader_leaves_the_global_generator_alone():
    before = torch.random.get_rng_state()
    grade_in_process(SLUG, SPEC["solution"], 3)
    assert torch.equal(before, torch.random.get_rng_state())


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = MODULE.make_cases(SEEDS[0]), MODULE.make_cases(SEEDS[1])
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]
    (xa, ba), (xb, bb) = MODULE.inputs(a[0]), MODULE.inputs(b[0])
    assert torch.equal(xa, xb)
    assert torch.equal(ba.attn.c_attn.weight, bb.attn.c_attn.weight)


def test_a_case_is_built_alike_while_another_thread_draws_from_torchs_generator():
    """The judge builds a case's block in one of several grading threads,
    which share torch's global generator: the block's weights come from the
    case's own generator, so another thread's draws cannot change them."""
    import threading

    cases = MODULE.make_cases(0)
    expected = [MODULE.wired(*MODULE.inputs(case)) for case in cases]
    stop = threading.Event()

    def draw():
        while not stop.is_set():
            torch.rand(64)

    other = threading.Thread(target=draw)
    other.start()
    try:
        for _ in range(10):
            for case, want in zip(cases, expected, strict=True):
                assert torch.equal(MODULE.wired(*MODULE.inputs(case)), want)
    finally:
        stop.set()
        other.join()
