"""grouped-query-attention: correct alternatives pass, tiling is named."""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F
from grading_engine.exercises import grouped_query_attention as ex

from tests.grader.inprocess import grade_fn_in_process

# Straight from run_case to check_case, one fixed seed.
_grade = partial(grade_fn_in_process, ex.SLUG, seed=6, wire=False)


def test_the_fused_gqa_kernel_passes():
    def fused(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    assert all(r.passed for r in _grade(fused))


def test_expand_and_reshape_like_hugging_face_repeat_kv_passes():
    def repeat_kv(q, k, v):
        b, n_kv, t, hs = k.shape
        n_rep = q.shape[1] // n_kv
        k = k[:, :, None].expand(b, n_kv, n_rep, t, hs).reshape(b, -1, t, hs)
        v = v[:, :, None].expand(b, n_kv, n_rep, t, hs).reshape(b, -1, t, hs)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    assert all(r.passed for r in _grade(repeat_kv))


def test_tiled_heads_are_named_but_pass_when_there_is_one_group():
    def tiled(q, k, v):
        n_rep = q.shape[1] // k.shape[1]
        k, v = k.repeat(1, n_rep, 1, 1), v.repeat(1, n_rep, 1, 1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    results = _grade(tiled)
    named = {r.diagnosis for r in results if not r.passed}
    assert "kv-heads-tiled" in named
    mqa_and_mha = [r for r in results if r.name.startswith(("MQA", "MHA"))]
    assert mqa_and_mha and all(r.passed for r in mqa_and_mha)


def test_the_mapping_is_consecutive_groups():
    q = torch.zeros(1, 6, 1, 2)
    k = torch.zeros(1, 2, 1, 2)
    v = torch.arange(2.0).view(1, 2, 1, 1).expand(1, 2, 1, 2)
    out = ex.attend(q, k, v)
    assert out[0, :, 0, 0].tolist() == [0, 0, 0, 1, 1, 1]
