"""kv-cache-step: the harness judges in-process exactly as in a grade."""

from __future__ import annotations

import math

import torch
from grading_engine.exercises import kv_cache_step as ex


def _grade(fn, seed: int = 4):
    results = []
    for case in ex.make_cases(seed):
        data, tensors = ex.run_case(fn, case)
        results += [(case, r) for r in ex.check_case(case, data, tensors)]
    return results


def _right(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    t_new, t_all = q.shape[2], k_all.shape[2]
    s = q @ k_all.transpose(-2, -1) / math.sqrt(q.shape[-1])
    visible = torch.ones(t_new, t_all, dtype=torch.bool).tril(diagonal=t_all - t_new)
    return s.masked_fill(~visible, float("-inf")).softmax(-1) @ v_all, k_all, v_all


def test_the_reference_answer_passes_and_sdpa_agrees():
    assert all(r.passed for _, r in _grade(_right))

    def fused(q, k_new, v_new, k_cache, v_cache):
        k_all = torch.cat([k_cache, k_new], dim=2)
        v_all = torch.cat([v_cache, v_new], dim=2)
        t_new, t_all = q.shape[2], k_all.shape[2]
        mask = torch.ones(t_new, t_all, dtype=torch.bool).tril(diagonal=t_all - t_new)
        y = torch.nn.functional.scaled_dot_product_attention(
            q, k_all, v_all, attn_mask=mask
        )
        return y, k_all, v_all

    assert all(r.passed for _, r in _grade(fused))


def test_an_empty_cache_never_reports_a_cache_order_mistake():
    def swapped(q, k_new, v_new, k_cache, v_cache):
        y, _, _ = _right(q, k_new, v_new, k_cache, v_cache)
        return y, torch.cat([k_new, k_cache], 2), torch.cat([v_new, v_cache], 2)

    results = _grade(swapped)
    prefill = [r for c, r in results if c["past"] == 0]
    assert prefill and all(r.passed for r in prefill)
    assert any(r.diagnosis == "cache-order" for c, r in results if c["past"])


def test_returning_only_the_output_says_what_is_missing():
    results = _grade(lambda *args: _right(*args)[0])
    assert all(not r.passed for _, r in results)
    assert "(y, k_all, v_all)" in results[0][1].message
