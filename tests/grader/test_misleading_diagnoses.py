"""Issue 21: a wrong answer that only loosely resembles a known mistake is not
given that mistake's name; the learner is told what differs instead.

Each submission below is a realistic wrong solution whose error is NOT the
mistake the grader used to name. The seeds are ones where the old, loose
matching named it (checked against the code before the fix).
"""

from __future__ import annotations

import pytest
import torch
from grading_engine.checks.fingerprints import distinct_match, tells_apart
from grading_engine.checks.tensors import compare_tensor

from tests.grader.inprocess import (
    grade_in_process,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
)

WRAP_AROUND = """
import torch
import torch.nn.functional as F


def lm_loss(logits, idx):
    targets = torch.roll(idx, shifts=-1, dims=1)  # the last target wraps around
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
"""

EPS_AS_FLOOR = """
import torch


def layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var.clamp(min=eps)) * weight + bias
"""

CHUNK_BY_SIZE = """
import torch


def split_heads(x, n_head):
    head_size = x.shape[-1] // n_head
    return torch.stack(x.chunk(head_size, dim=-1), dim=1)  # a size, not a count
"""

CACHE_NOT_EXTENDED = """
import math

import torch


def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k = torch.cat([k_cache, k_new], dim=2)
    v = torch.cat([v_cache, v_new], dim=2)
    t_q, t_k = q.shape[2], k.shape[2]
    att = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)
    y = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1) @ v
    return y, k_cache, v_cache  # the caches it built are dropped
"""


def failures(slug: str, code: str, seed: int):
    results = grade_in_process(slug, code, seed)
    failed = [r for r in results if not r.passed]
    assert failed, "the wrong solution passed"
    return failed


@pytest.mark.parametrize("seed", [2, 4, 56])
def test_a_wrap_around_target_is_not_called_a_shift_mistake(seed):
    failed = failures("lm-loss-shifted", WRAP_AROUND, seed)
    named = {r.diagnosis for r in failed} - {None}
    assert not named & {"shifted-wrong-way", "no-shift"}, [r.message for r in failed]
    assert any("differ from the reference" in r.message for r in failed)


@pytest.mark.parametrize("seed", [2, 11, 2026])
def test_an_eps_used_as_a_floor_is_not_called_layernorm_without_eps(seed):
    failed = failures("layer-norm", EPS_AS_FLOOR, seed)
    assert not {r.diagnosis for r in failed} - {None}, [r.message for r in failed]
    assert not any("without eps" in r.message for r in failed)
    assert any("differ from the reference" in r.message for r in failed)


@pytest.mark.parametrize("seed", [1, 2026])
def test_chunk_given_a_size_is_not_called_swapped_axes(seed):
    failed = failures("split-heads", CHUNK_BY_SIZE, seed)
    # Its numbers are exactly the known "size for count" mistake's: named as
    # that, never as swapped axes.
    named = {r.diagnosis for r in failed} - {None}
    assert named == {"split-size-for-count"}, [r.message for r in failed]
    assert not any("swapped" in r.message for r in failed)
    shape = next(r for r in failed if r.name.endswith(": shape"))
    assert "no transpose or permute of your tensor gives the expected values" in (
        shape.message
    )


@pytest.mark.parametrize("seed", [1, 2026])
def test_a_cache_never_extended_is_not_called_a_missing_time_axis(seed):
    failed = failures("kv-cache-step", CACHE_NOT_EXTENDED, seed)
    caches = [r for r in failed if r.name.endswith(("k_all: shape", "v_all: shape"))]
    assert caches and not any("is missing \u2014" in r.message for r in caches)
    assert all(r.diagnosis is None for r in caches)
    one = next(r for r in caches if r.name.startswith("one new token over 6 cached"))
    assert "the time axis has 6 entries, expected 7" in one.message
    assert "yours equal the expected entries 0..5, and the last 1 are missing" in (
        one.message
    )


def test_the_rule_names_only_a_distinct_match():
    # exact to rounding: named; about as far as the real error: not named
    assert distinct_match(1e-7, 0.3, 0.3, numbers=100)
    assert not distinct_match(0.2, 0.3, 0.3, numbers=100)
    # close to the mistake, but the mistake is nearly the right answer
    assert not distinct_match(1e-4, 5e-4, 0.3, numbers=100)
    # one number needs a much tighter match than a tensor
    assert distinct_match(5e-3, 1.0, 1.0, numbers=100)
    assert not distinct_match(5e-3, 1.0, 1.0, numbers=1)
    assert not distinct_match(0.0, 0.0, 0.0)  # a mistake that changes nothing


def test_tells_apart_wants_the_answer_much_closer_to_the_mistake():
    reference = torch.linspace(-1, 1, 50, dtype=torch.float64)
    mistake = reference + 1e-3  # beyond the tolerance of the reference
    assert tells_apart(mistake + 1e-9, mistake, reference, rtol=0.0, atol=4e-4)
    # within the loose tolerance of the mistake, but a third of the way back
    between = reference + 7e-4
    assert not tells_apart(between, mistake, reference, rtol=0.0, atol=4e-4)


def test_a_real_transpose_keeps_its_swapped_axes_diagnosis():
    expected = torch.randn(2, 3, 5, 4)
    got = expected.transpose(1, 3).contiguous()  # (2, 4, 5, 3), a reorder
    shape = compare_tensor(
        "case",
        {"type": "torch.Tensor"},
        got,
        expected,
        axes=("batch", "n_head", "time", "head_size"),
        rtol=0.0,
        atol=0.0,
    )[0]
    assert not shape.passed and shape.diagnosis == "swapped-axes"
    assert "swapped" in shape.message
