"""Shape explanations, value reports, fingerprints and divergence probes.

Every wrong computation a fingerprint must recognise is written out here,
independently of grading_engine.checks.fingerprints (by editing the reference
model's modules or with einsum), so the test does not grade the grader with
its own code.
"""

from __future__ import annotations

import copy
import math

import pytest
import torch
import torch.nn as nn
from grading_engine.checks.divergence import first_divergence, probe_state_dict, stages
from grading_engine.checks.fingerprints import (
    ATTENTION_FLAWS,
    GPT2_FLAWS,
    Variant,
    attention,
    fingerprint,
    gpt2_logits,
)
from grading_engine.checks.learner_calls import call_learner, capture_tensor
from grading_engine.checks.shapes import check_shape
from grading_engine.checks.tensors import (
    check_allclose,
    check_dtype,
    check_finite,
    check_is_tensor,
    check_no_error,
    compare_tensor,
)
from grading_engine.reference import build_model
from torch.nn import functional as F

GPT2_SIZES = {"n_embd": 768, "vocab_size": 50257}
RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- shapes -----------------------------------------------------------------


def test_it_passes_a_matching_shape():
    result = check_shape("logits", (2, 3, 50257), (2, 3, 50257), sizes=GPT2_SIZES)
    assert result.passed and result.diagnosis is None


def test_it_names_the_missing_vocabulary_axis_and_the_hint():
    result = check_shape(
        "logits",
        (2, 3, 768),
        (2, 3, 50257),
        axes=("batch", "time", "vocab"),
        sizes=GPT2_SIZES,
        hints={
            "replaced:vocab->n_embd": (
                "missing-projection",
                "did you return x instead of x @ weight.T?",
            )
        },
    )
    assert not result.passed
    assert result.message.startswith("got (2, 3, 768), expected (2, 3, 50257)")
    assert "the vocabulary axis is missing" in result.message
    assert "the last axis is n_embd (768)" in result.message
    assert result.message.endswith("did you return x instead of x @ weight.T?")
    assert result.diagnosis == "missing-projection"


def test_it_recognises_swapped_batch_and_time():
    result = check_shape("x", (5, 3, 16), (3, 5, 16), axes=("batch", "time", "n_embd"))
    assert result.diagnosis == "swapped-axes"
    assert "batch and time axes are swapped" in result.message


def test_it_recognises_a_transposed_weight():
    result = check_shape("w", (16, 48), (48, 16), axes=("out", "in"))
    assert result.diagnosis == "swapped-axes"
    assert "output-feature and input-feature axes are swapped" in result.message


def test_it_recognises_a_missing_batch_axis():
    result = check_shape("logits", (3, 50257), (1, 3, 50257), sizes=GPT2_SIZES)
    assert result.diagnosis == "missing-axis"
    assert "batch axis (batch = 1) is missing" in result.message


@pytest.mark.parametrize("got", [(2, 4, 5, 8), (2, 5, 4, 8)])
def test_it_recognises_heads_not_merged_back(got):
    result = check_shape(
        "y",
        got,
        (2, 5, 32),
        axes=("batch", "time", "n_embd"),
        sizes={"n_head": 4, "head_size": 8},
    )
    assert result.diagnosis == "heads-not-merged"
    assert ".view(b, t, n_embd)" in result.message


def test_it_recognises_flattened_batch_and_time():
    result = check_shape("logits", (6, 97), (2, 3, 97), sizes={"n_embd": 16})
    assert result.diagnosis == "flattened-axes"
    assert "2 x 3 = 6" in result.message


def test_it_recognises_an_extra_size_one_axis():
    result = check_shape(
        "x", (2, 1, 3, 16), (2, 3, 16), axes=("batch", "time", "n_embd")
    )
    assert result.diagnosis == "extra-axis"
    assert "keepdim=True" in result.message


def test_it_names_an_unknown_size_plainly():
    result = check_shape("x", (2, 3, 17), (2, 3, 16), axes=("batch", "time", "n_embd"))
    assert not result.passed
    assert "has size 17, expected n_embd = 16" in result.message


# --- dtype, finiteness, closeness -------------------------------------------


def test_it_reports_max_abs_and_rel_error_and_the_worst_element():
    expected = torch.zeros(2, 3, 4) + 1.0
    got = expected.clone()
    got[1, 2, 3] = 1.5
    got[0, 0, 0] = 1.1
    result = check_allclose("v", got, expected, rtol=1e-4, atol=1e-5)
    assert not result.passed
    assert "at 2 of 24 elements" in result.message
    assert "max abs error 5.00e-01" in result.message
    assert "max rel error 5.00e-01" in result.message
    assert "worst at [1, 2, 3]: got 1.5, expected 1" in result.message
    assert "rtol=0.0001, atol=1e-05" in result.message


def test_it_accepts_differences_inside_the_stated_tolerance():
    expected = torch.randn(4, 5)
    got = expected + 1e-7
    assert check_allclose("v", got, expected, rtol=1e-4, atol=1e-5).passed


def test_it_counts_and_locates_infinities_with_the_hint():
    logits = torch.zeros(3, 10)
    logits[1, 4] = 2000.0
    probs = torch.exp(logits) / torch.exp(logits).sum(-1, keepdim=True)
    result = check_finite(
        "p", probs, what="probabilities", hint=("unstable-softmax", "subtract the max")
    )
    assert not result.passed and result.diagnosis == "unstable-softmax"
    assert "NaN at 1 of 30 positions (first at [1, 4])" in result.message
    assert result.message.endswith("subtract the max")

    inf = torch.exp(torch.tensor([1.0, 100.0, 200.0]))
    result = check_finite("x", inf, what="logits")
    assert "inf at 2 of 3 positions (first at [1])" in result.message


def test_it_names_a_wrong_dtype():
    result = check_dtype("x", torch.zeros(2, dtype=torch.float32), torch.float64)
    assert not result.passed and result.diagnosis == "wrong-dtype"
    assert "got dtype torch.float32, expected torch.float64" in result.message


def test_the_chain_stops_at_a_wrong_shape():
    results = compare_tensor(
        "c",
        {"type": "torch.Tensor"},
        torch.zeros(3, 2, 4),
        torch.zeros(2, 3, 4),
        axes=("batch", "time", "n_embd"),
        rtol=RTOL,
        atol=ATOL,
    )
    assert [r.name for r in results] == ["c: shape"]


def test_it_says_what_came_back_instead_of_a_tensor():
    result = check_is_tensor("c", {"type": "builtins.NoneType"}, None)
    assert "forget the return statement" in result.message
    result = check_is_tensor("c", {"type": "builtins.list"}, None)
    assert "returned a builtins.list" in result.message


# --- child-side capture -----------------------------------------------------


def test_capture_gives_a_plain_contiguous_copy():
    param = nn.Parameter(torch.randn(4, 3))
    info, tensor = capture_tensor(param.T)
    assert info["dtype"] == "torch.float32"
    assert type(tensor) is torch.Tensor and tensor.is_contiguous()
    assert not tensor.requires_grad and tensor.data_ptr() != param.data_ptr()
    assert torch.equal(tensor, param.detach().T)


def test_capture_records_a_non_tensor_by_type():
    info, tensor = capture_tensor([1, 2])
    assert tensor is None and info["type"] == "builtins.list"


def test_a_learner_exception_becomes_data_with_a_diagnosis():
    def learner(x, w):
        return x @ w

    code = compile("def learner(x, w):\n    return x @ w\n", "<submission>", "exec")
    namespace = {}
    exec(code, namespace)
    for fn, line in ((learner, None), (namespace["learner"], 2)):
        value, error = call_learner(fn, torch.zeros(2, 3), torch.zeros(4, 3))
        assert value is None and error["type"] == "RuntimeError"
        assert error["line"] == line
    result = check_no_error(
        "c", error, patterns=[("cannot be multiplied", "transposed-weight", "use W.T")]
    )
    assert result.diagnosis == "transposed-weight"
    assert "(line 2)" in result.message and result.message.endswith("use W.T")


# --- attention fingerprints from independent wrong computations -------------


def einsum_attention(x, wa, ba, wp, bp, n_head, *, scale=None, mask="before", dim=-1):
    """Attention with einsum: an implementation apart from the grader's."""
    b, t, d = x.shape
    hs = d // n_head
    qkv = torch.einsum("btd,ed->bte", x, wa) + ba
    q, k, v = (z.reshape(b, t, n_head, hs) for z in qkv.chunk(3, dim=-1))
    scores = torch.einsum("bqhs,bkhs->bhqk", q, k)
    scores = scores * (1 / math.sqrt(hs) if scale is None else scale)
    allowed = torch.arange(t)[:, None] >= torch.arange(t)[None, :]
    if mask == "before":
        scores = torch.where(allowed, scores, torch.tensor(float("-inf")))
    weights = torch.softmax(scores, dim=dim)
    if mask == "after":
        weights = weights * allowed
    y = torch.einsum("bhqk,bkhs->bqhs", weights, v).reshape(b, t, d)
    return torch.einsum("btd,ed->bte", y, wp) + bp


@pytest.fixture(scope="module")
def attn_inputs():
    g = torch.Generator().manual_seed(0)
    d, nh = 24, 3
    return [
        torch.randn(2, 6, d, generator=g),
        torch.randn(3 * d, d, generator=g) / d**0.5,
        torch.randn(3 * d, generator=g) * 0.1,
        torch.randn(d, d, generator=g) / d**0.5,
        torch.randn(d, generator=g) * 0.1,
        nh,
    ]


def _attention_variants(args):
    return [
        Variant(diagnosis, lambda f=flaws: attention(*args, flaws=f))
        for diagnosis, flaws in ATTENTION_FLAWS
    ]


def _wrong_attention(args, diagnosis):
    x, wa, ba, wp, bp, nh = args
    d = x.shape[-1]
    if diagnosis == "missing-scale":
        return einsum_attention(*args, scale=1.0)
    if diagnosis == "scale-by-n-embd":
        return einsum_attention(*args, scale=1 / math.sqrt(d))
    if diagnosis == "missing-causal-mask":
        return einsum_attention(*args, mask="none")
    if diagnosis == "mask-after-softmax":
        return einsum_attention(*args, mask="after")
    if diagnosis == "softmax-wrong-axis":
        return einsum_attention(*args, dim=-2)
    if diagnosis == "transposed-weight":
        return einsum_attention(x, wa, ba, wp.T, bp, nh)
    if diagnosis == "scale-by-d-k":
        return einsum_attention(*args, scale=1 / (d // nh))
    if diagnosis == "scale-multiplied":
        return einsum_attention(*args, scale=math.sqrt(d // nh))
    raise AssertionError(diagnosis)


def test_the_right_attention_matches_the_reference_and_no_fingerprint(attn_inputs):
    from grading_engine.reference import CausalSelfAttention, GPTConfig

    x, wa, ba, wp, bp, nh = attn_inputs
    module = CausalSelfAttention(GPTConfig(n_embd=x.shape[-1], n_head=nh))
    module.load_state_dict(
        {"c_attn.weight": wa, "c_attn.bias": ba, "c_proj.weight": wp, "c_proj.bias": bp}
    )
    with torch.no_grad():
        reference = module(x)
    right = einsum_attention(*attn_inputs)
    assert torch.allclose(right, reference, rtol=RTOL, atol=ATOL)
    variants = _attention_variants(attn_inputs)
    assert fingerprint("a", right, reference, variants, rtol=RTOL, atol=ATOL) is None


@pytest.mark.parametrize("diagnosis", [d for d, _ in ATTENTION_FLAWS])
def test_each_attention_mistake_is_named(attn_inputs, diagnosis):
    reference = einsum_attention(*attn_inputs)
    wrong = _wrong_attention(attn_inputs, diagnosis)
    result = fingerprint(
        "a", wrong, reference, _attention_variants(attn_inputs), rtol=RTOL, atol=ATOL
    )
    assert result is not None and not result.passed
    assert result.diagnosis == diagnosis
    assert len(result.message) > 60  # says what happened and how to fix it


# --- whole-model fingerprints from edited reference models ------------------


def _randomised(config="tiny", tied=False, seed=0):
    """A tiny reference GPT whose biases and LayerNorms are not trivial."""
    model = build_model(config, seed=seed, tied=tied)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "ln" in name and name.endswith("weight"):
                p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            elif "wte" in name:
                p.copy_(0.02 * torch.randn(p.shape, generator=g))
            elif "wpe" in name:
                p.copy_(0.01 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)
    return model


class UnbiasedLayerNorm(nn.Module):
    def __init__(self, ln: nn.LayerNorm):
        super().__init__()
        self.weight, self.bias, self.eps = ln.weight, ln.bias, ln.eps

    def forward(self, x):
        z = (x - x.mean(-1, keepdim=True)) / torch.sqrt(
            x.var(-1, keepdim=True) + self.eps
        )
        return z * self.weight + self.bias


class EinsumAttention(nn.Module):
    """Stands in for a block's attention, with one mistake."""

    def __init__(self, attn, transposed=False, **flaw):
        super().__init__()
        self.attn, self.transposed, self.flaw = attn, transposed, flaw

    def forward(self, x):
        a = self.attn
        w_proj = a.c_proj.weight.T if self.transposed else a.c_proj.weight
        return einsum_attention(
            x,
            a.c_attn.weight,
            a.c_attn.bias,
            w_proj,
            a.c_proj.bias,
            a.n_head,
            **self.flaw,
        )


def _forward_without_residual(model, idx, *, post_norm=False):
    x = model._embed(idx)
    for block in model.transformer.h:
        if post_norm:
            x = block.ln_1(x + block.attn(x))
            x = block.ln_2(x + block.mlp(x))
        else:
            x = block.attn(block.ln_1(x))
            x = block.mlp(block.ln_2(x))
    return model.lm_head(model.transformer.ln_f(x))


def _wrong_model_logits(model, idx, diagnosis):
    """Logits of `model` with one mistake, made by editing a copy of it."""
    m = copy.deepcopy(model)
    blocks = list(m.transformer.h)
    if diagnosis == "exact-gelu":
        for b in blocks:
            b.mlp.gelu = nn.GELU()
    elif diagnosis == "relu-activation":
        for b in blocks:
            b.mlp.gelu = nn.ReLU()
    elif diagnosis == "layernorm-eps":
        for module in m.modules():
            if isinstance(module, nn.LayerNorm):
                module.eps = 1e-6
    elif diagnosis == "layernorm-unbiased-variance":
        for b in blocks:
            b.ln_1, b.ln_2 = UnbiasedLayerNorm(b.ln_1), UnbiasedLayerNorm(b.ln_2)
        m.transformer.ln_f = UnbiasedLayerNorm(m.transformer.ln_f)
    elif diagnosis == "missing-residual":
        return _forward_without_residual(m, idx)
    elif diagnosis == "post-norm":
        return _forward_without_residual(m, idx, post_norm=True)
    elif diagnosis == "missing-final-layernorm":
        m.transformer.ln_f = nn.Identity()
    elif diagnosis == "missing-position-embedding":
        m.transformer.wpe.weight.data.zero_()
    elif diagnosis == "head-uses-wte":
        m.lm_head.weight = m.transformer.wte.weight
    else:
        head_size = m.config.n_embd // m.config.n_head
        flaw = {
            "missing-scale": {"scale": 1.0},
            "scale-by-n-embd": {"scale": 1 / math.sqrt(m.config.n_embd)},
            "scale-by-d-k": {"scale": 1 / head_size},
            "scale-multiplied": {"scale": math.sqrt(head_size)},
            "missing-causal-mask": {"mask": "none"},
            "mask-after-softmax": {"mask": "after"},
            "softmax-wrong-axis": {"dim": -2},
            "transposed-weight": {"transposed": True},
        }[diagnosis]
        for b in blocks:
            b.attn = EinsumAttention(b.attn, **flaw)
    return m(idx)


@pytest.fixture(scope="module")
def tiny():
    model = _randomised()
    idx = torch.randint(
        0, model.config.vocab_size, (2, 7), generator=torch.Generator().manual_seed(1)
    )
    with torch.no_grad():
        return model, idx, model.state_dict(), model(idx)


def _gpt2_variants(idx, sd, n_head):
    return [
        Variant(diagnosis, lambda f=flaws: gpt2_logits(idx, sd, n_head, f))
        for diagnosis, flaws in GPT2_FLAWS
    ]


def test_the_functional_model_without_flaws_is_the_reference(tiny):
    model, idx, sd, reference = tiny
    logits = gpt2_logits(idx, sd, model.config.n_head)
    assert torch.allclose(logits, reference, rtol=RTOL, atol=ATOL)
    variants = _gpt2_variants(idx, sd, model.config.n_head)
    assert (
        fingerprint("m", reference, reference, variants, rtol=RTOL, atol=ATOL) is None
    )


@pytest.mark.parametrize("diagnosis", sorted({d for d, _ in GPT2_FLAWS}))
def test_each_model_mistake_is_named(tiny, diagnosis):
    model, idx, sd, reference = tiny
    with torch.no_grad():
        wrong = _wrong_model_logits(model, idx, diagnosis)
    assert not torch.allclose(wrong, reference, rtol=RTOL, atol=ATOL)
    result = fingerprint(
        "m",
        wrong,
        reference,
        _gpt2_variants(idx, sd, model.config.n_head),
        rtol=RTOL,
        atol=ATOL,
    )
    assert result is not None and result.diagnosis == diagnosis, result


# --- divergence probes ------------------------------------------------------


def test_a_zeroed_block_is_the_identity_for_the_reference(tiny):
    model, idx, sd, _ = tiny
    n_layer = model.config.n_layer
    trace = model.forward_trace(idx)
    with torch.no_grad():
        probe = copy.deepcopy(model)
        probe.load_state_dict(probe_state_dict(sd, n_layer, "embedding"))
        head_only = probe.lm_head(probe.transformer.ln_f(trace["embedding"]))
        assert torch.allclose(probe(idx), head_only, atol=1e-6)

        probe.load_state_dict(probe_state_dict(sd, n_layer, "h.0.attn"))
        after_attn = probe.lm_head(probe.transformer.ln_f(trace["h.0.attn"]))
        assert torch.allclose(probe(idx), after_attn, atol=1e-5)

        probe.load_state_dict(probe_state_dict(sd, n_layer, "head"))
        bias_only = probe.transformer.ln_f.bias @ probe.lm_head.weight.T
        assert torch.allclose(probe(idx), bias_only.expand(2, 7, -1), atol=1e-6)
    # The original state dict is left alone.
    assert sd["transformer.h.0.mlp.c_proj.weight"].abs().sum() > 0


def _probe_results(model, idx, sd, forward):
    n_layer = model.config.n_layer
    dicts = {s: probe_state_dict(sd, n_layer, s) for s in stages(n_layer)}
    refs, got = {}, {}
    for stage, probe_sd in dicts.items():
        reference = copy.deepcopy(model)
        reference.load_state_dict(probe_sd)
        with torch.no_grad():
            refs[stage] = reference(idx)
            got[stage] = forward(reference, idx)
    return first_divergence(
        "f", got, refs, dicts, idx, model.config.n_head, rtol=RTOL, atol=ATOL
    )


def test_it_passes_a_right_forward_through_every_probe(tiny):
    model, idx, sd, _ = tiny
    result = _probe_results(
        model, idx, sd, lambda m, i: gpt2_logits(i, m.state_dict(), 2)
    )
    assert result.passed


def test_it_blames_the_first_stage_that_differs(tiny):
    model, idx, sd, _ = tiny

    def wrong_second_mlp(m, i):
        m = copy.deepcopy(m)
        m.transformer.h[1].mlp.gelu = nn.GELU()  # exact GELU in block 1 only
        return m(i)

    result = _probe_results(model, idx, sd, wrong_second_mlp)
    assert not result.passed
    assert result.message.startswith("block 1 MLP differs")
    # A mistake in one block only is no known (whole-model) mistake.
    assert result.diagnosis is None


def test_it_names_the_mistake_found_at_the_first_stage(tiny):
    model, idx, sd, _ = tiny

    def exact_gelu(m, i):
        m = copy.deepcopy(m)
        for block in m.transformer.h:
            block.mlp.gelu = nn.GELU()
        return m(i)

    result = _probe_results(model, idx, sd, exact_gelu)
    assert result.message.startswith("block 0 MLP differs")
    assert result.diagnosis == "exact-gelu"
    assert "tanh approximation" in result.message


def test_it_blames_the_embedding_for_a_missing_position_embedding(tiny):
    model, idx, sd, _ = tiny

    def no_positions(m, i):
        m = copy.deepcopy(m)
        m.transformer.wpe.weight.data.zero_()
        return m(i)

    result = _probe_results(model, idx, sd, no_positions)
    assert "embedding -> ln_f -> head differs" in result.message
    assert result.diagnosis == "missing-position-embedding"


def test_it_blames_the_head_when_only_the_head_is_wrong(tiny):
    model, idx, sd, _ = tiny
    result = _probe_results(
        model,
        idx,
        sd,
        lambda m, i: F.linear(
            m.transformer.ln_f(m.forward_trace(i)["h.1.mlp"]), m.transformer.wte.weight
        ),
    )
    assert result.message.startswith("the output head differs")
    assert result.diagnosis == "head-uses-wte"


def test_capture_parts_takes_a_namedtuple_as_the_tuple_it_asks_for():
    from collections import namedtuple

    from grading_engine.checks.learner_calls import capture_parts

    Pair = namedtuple("Pair", "weight bias")
    data, tensors = capture_parts(
        lambda: Pair(torch.ones(2), torch.zeros(2)), (), ("weight", "bias")
    )
    assert data["length"] == 2 and set(tensors) == {"weight", "bias"}


def test_raised_accepts_a_subclass_of_the_named_exception():
    from grading_engine.checks.learner_calls import call_learner
    from grading_engine.checks.tensors import raised

    class TooLong(ValueError):
        pass

    def refuses():
        raise TooLong("past the table")

    _, error = call_learner(refuses)
    assert error["type"] == "TooLong" and raised(error, "ValueError")
    assert not raised(error, "KeyError")
    _, error = call_learner(lambda: {}["x"])
    assert not raised(error, "ValueError")
    assert not raised({"type": "TooLong", "kinds": "ValueError"}, "ValueError")


@pytest.mark.parametrize("rtol", [0.0, 1e-4])
def test_where_the_reference_is_infinite_only_the_same_value_matches(rtol):
    """A filtered logit is -inf: 0 there is a different answer (its token can
    still be drawn), whatever the tolerance; inf - inf is NaN, not close."""
    want = torch.tensor([1.0, float("-inf"), float("nan"), float("inf")])
    same = check_allclose("v", want.clone(), want, rtol=rtol, atol=1e-5)
    assert same.passed, same.message
    for wrong in (0.0, -1e30, float("inf")):
        got = want.clone()
        got[1] = wrong
        result = check_allclose("v", got, want, rtol=rtol, atol=1e-5)
        assert not result.passed and "at 1 of 4 elements" in result.message
