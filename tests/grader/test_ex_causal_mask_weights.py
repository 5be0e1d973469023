"""causal-mask-weights: the harness judges in-process exactly as in a grade."""

from __future__ import annotations

import torch
from grading_engine.exercises import causal_mask_weights as ex


def _grade(fn, seed: int = 3):
    results = []
    for case in ex.make_cases(seed):
        data, tensors = ex.run_case(fn, case)
        results += [(case, r) for r in ex.check_case(case, data, tensors)]
    return results


def _right(scores):
    t_q, t_k = scores.shape[-2:]
    visible = torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)
    return scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)


def test_cases_differ_by_seed_and_include_hidden_cache_cases():
    a, b = ex.make_cases(1), ex.make_cases(2)
    assert a != b
    assert any(c["hidden"] and c["tk"] > c["tq"] for c in a)
    assert any(not c["hidden"] and c["tk"] > c["tq"] for c in a)


def test_the_reference_answer_passes_every_check():
    assert all(r.passed for _, r in _grade(_right))


def test_a_large_negative_fill_is_accepted():
    def finite(scores):
        t_q, t_k = scores.shape[-2:]
        visible = torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)
        return scores.masked_fill(~visible, torch.finfo(scores.dtype).min).softmax(-1)

    assert all(r.passed for _, r in _grade(finite))


def test_a_square_mask_fails_only_where_there_is_a_cache():
    def square(scores):
        t_q, t_k = scores.shape[-2:]
        visible = torch.ones(t_q, t_k, dtype=torch.bool).tril()
        return scores.masked_fill(~visible, float("-inf")).softmax(-1)

    results = _grade(square)
    failed_cases = {c["name"] for c, r in results if not r.passed}
    assert failed_cases == {c["name"] for c, _ in results if c["tk"] > c["tq"]}
    assert {r.diagnosis for _, r in results if not r.passed} >= {"mask-not-offset"}


def test_nan_rows_are_named_without_a_meaningless_distance():
    def renormalised(scores):
        t_q, t_k = scores.shape[-2:]
        p = scores.softmax(-1) * torch.ones(t_q, t_k).tril(diagonal=t_k - t_q)
        return p / p.sum(-1, keepdim=True)

    named = [r for _, r in _grade(renormalised) if r.diagnosis]
    assert [r.diagnosis for r in named] == ["renormalised-after-softmax"]
    assert "NaN in the same places" in named[0].message
    assert "inf" not in named[0].message.split("(")[-1]


def test_a_wrong_shape_and_a_crash_fail_with_messages():
    shape = _grade(lambda s: s.sum(-1))
    assert any(not r.passed and "shape" in r.name for _, r in shape)

    def crash(scores):
        raise ValueError("boom")

    crashed = _grade(crash)
    assert all(not r.passed and "boom" in r.message for _, r in crashed)


def test_every_draw_has_the_mask_boundary_at_and_just_past_a_square():
    for seed in range(0, 200, 9):
        pairs = {(c["tq"], c["tk"]) for c in ex.make_cases(seed)}
        assert any(tq == tk for tq, tk in pairs)  # no cache: the square mask
        assert any(tk == tq + 1 for tq, tk in pairs)  # one cached key
        assert any(tq == 1 and tk > 1 for tq, tk in pairs)  # one new token
