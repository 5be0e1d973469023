"""scaled-dot-product: PyTorch's own kernel passes; returning weights is named."""

from __future__ import annotations

from functools import partial

import torch
import torch.nn.functional as F
from grading_engine.exercises import scaled_dot_product as ex

from tests.grader.inprocess import grade_fn_in_process

# Straight from run_case to check_case, one fixed seed.
_grade = partial(grade_fn_in_process, ex.SLUG, seed=7, wire=False)


def test_pytorch_sdpa_passes():
    assert all(r.passed for r in _grade(F.scaled_dot_product_attention))


def test_cases_are_never_square_where_it_would_hide_a_mistake():
    for case in ex.make_cases(11):
        if case["hidden"]:
            assert case["tk"] != case["tq"]
            assert case["dv"] not in (case["tk"], case["dk"])


def test_returning_the_weights_is_named_on_both_public_cases():
    def weights(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)

    results = _grade(weights)
    public = [r for r in results if not r.hidden and not r.passed]
    assert {r.diagnosis for r in public} == {"returned-weights"}
    assert len(public) == 2
