"""fuse-qkv: the harness judges in-process exactly as in a grade."""

from __future__ import annotations

from functools import partial

import torch
from grading_engine.exercises import fuse_qkv as ex

from tests.grader.inprocess import grade_fn_in_process

# Straight from run_case to check_case, one fixed seed.
_grade = partial(grade_fn_in_process, ex.SLUG, seed=5, wire=False)


def test_the_reference_answer_passes_including_the_mini_model_round_trip():
    def right(w_q, b_q, w_k, b_k, w_v, b_v):
        return torch.cat([w_q, w_k, w_v]), torch.cat([b_q, b_k, b_v])

    results = _grade(right)
    assert results and all(r.passed for r in results)


def test_every_wrong_order_of_blocks_is_named():
    def v_first(w_q, b_q, w_k, b_k, w_v, b_v):
        return torch.cat([w_v, w_q, w_k]), torch.cat([b_v, b_q, b_k])

    named = {r.diagnosis for r in _grade(v_first) if not r.passed}
    assert "qkv-order" in named


def test_a_single_tensor_is_refused_with_a_message():
    results = _grade(lambda *args: torch.cat(args[0::2]))
    assert all(not r.passed for r in results)
    assert "pair (weight, bias)" in results[0].message
