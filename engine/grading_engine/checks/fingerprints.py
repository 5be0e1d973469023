"""Name the mistake: compare a wrong answer with known wrong computations.

When a learner's values are off, the parent recomputes the same case the way
the usual mistakes would (no 1/sqrt(head_size), no causal mask, exact GELU,
...) and reports the one the learner's output matches. The wrong
computations live here as one functional GPT-2 with "flaws" switches, so
attention and the full forward share them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from grading_engine.checks.placement import misplaced
from grading_engine.checks.proportional import scaled
from grading_engine.checks.result import CheckResult, fail, likely_mistake
from grading_engine.checks.slip_rules import ruled_out
from grading_engine.checks.tensors import error_report

# What each diagnosis means for the learner, and how to fix it.
MISTAKES: dict[str, str] = {
    "missing-scale": (
        "your output matches attention without the 1/sqrt(head_size) scale: "
        "multiply q @ k.transpose(-2, -1) by 1 / math.sqrt(head_size) before "
        "the softmax, or the scores grow with the head size and the softmax "
        "saturates"
    ),
    "scale-by-d-k": (
        "your output matches attention scaled by 1/head_size: the scale is "
        "1 / math.sqrt(head_size). A dot product of head_size unit-variance "
        "terms has variance head_size, so its square root (the standard "
        "deviation) is what brings the scores back to unit scale"
    ),
    "scale-multiplied": (
        "your output matches scores MULTIPLIED by sqrt(head_size): divide by "
        "it. The dot product already grows like sqrt(head_size); multiplying "
        "makes the scores larger still and saturates the softmax"
    ),
    "scale-by-n-embd": (
        "your output matches attention scaled by 1/sqrt(n_embd): each head "
        "works in head_size = n_embd // n_head dimensions, so scale by "
        "1 / math.sqrt(head_size)"
    ),
    "missing-causal-mask": (
        "your output matches attention without the causal mask: a position "
        "may only attend to itself and earlier positions; fill the scores "
        "above the diagonal with -inf before the softmax"
    ),
    "mask-after-softmax": (
        "your output matches a mask applied after the softmax: the weights "
        "were normalised over all positions (the future included) and then "
        "zeroed; apply masked_fill(..., -inf) to the scores before the softmax"
    ),
    "softmax-wrong-axis": (
        "your output matches a softmax over the wrong axis: the attention "
        "weights of one query (the last axis, dim=-1) must sum to 1"
    ),
    "transposed-weight": (
        "your output matches a weight used in the wrong orientation: these "
        "weights are stored (out, in) like nn.Linear, so compute x @ W.T + b "
        "(or F.linear(x, W, b)), not x @ W"
    ),
    "exact-gelu": (
        "your output matches the MLP with the exact (erf) GELU: GPT-2 was "
        "trained with the tanh approximation, "
        "F.gelu(x, approximate='tanh')"
    ),
    "relu-activation": (
        "your output matches the MLP with ReLU: GPT-2's MLP uses GELU with the "
        "tanh approximation, F.gelu(x, approximate='tanh')"
    ),
    "silu-activation": (
        "your output matches the MLP with SiLU (swish, x * sigmoid(x)), the "
        "activation of LLaMA-style models: GPT-2's MLP uses GELU with the tanh "
        "approximation, F.gelu(x, approximate='tanh')"
    ),
    "gelu-twice": (
        "your output matches GELU applied twice, gelu(gelu(h)): the hidden "
        "layer goes through the activation once, between c_fc and c_proj"
    ),
    "layernorm-eps": (
        "your output matches LayerNorm with a different eps: GPT-2 uses "
        "eps=1e-5 (the nn.LayerNorm default), added to the variance inside "
        "the square root"
    ),
    "layernorm-unbiased-variance": (
        "your output matches LayerNorm with the unbiased variance (divided by "
        "n - 1): LayerNorm divides by n; use x.var(-1, unbiased=False, "
        "keepdim=True) or F.layer_norm"
    ),
    "missing-residual": (
        "your output matches a block without a residual connection: each "
        "sub-layer adds to the stream, x = x + attn(ln_1(x)) and "
        "x = x + mlp(ln_2(x))"
    ),
    "post-norm": (
        "your output matches the post-norm block of the original Transformer, "
        "ln(x + sublayer(x)): GPT-2 normalises before each sub-layer, "
        "x = x + attn(ln_1(x))"
    ),
    "missing-final-layernorm": (
        "your output matches the model without ln_f: GPT-2 normalises the "
        "residual stream once more (transformer.ln_f) before the head"
    ),
    "missing-position-embedding": (
        "your output matches the token embedding alone: add the position "
        "embedding wpe[:t] (positions 0..t-1), broadcast over the batch"
    ),
    "head-uses-wte": (
        "your output matches a head that reuses transformer.wte.weight: this "
        "model is untied, so the head has its own lm_head.weight"
    ),
}


@dataclass(frozen=True)
class Flaws:
    """Switches for the known mistakes; the defaults are GPT-2 done right."""

    scale: str = "head_size"  # "none", "n_embd", "head_size_full", "times"
    mask: str = "before"  # "none", "after"
    softmax_dim: int = -1
    c_proj_transposed: bool = False  # x @ W for the square (d, d) projection
    gelu: str = "tanh"  # "exact", "relu"
    ln_eps: float = 1e-5
    ln_unbiased: bool = False
    residual: bool = True
    post_norm: bool = False
    position: bool = True
    ln_f: bool = True
    head_from_wte: bool = False
    split_reshaped: bool = False  # heads split by a reshape of (b, t, d)
    merge_viewed: bool = False  # heads merged by a view of (b, nh, t, hs)


RIGHT = Flaws()

# (diagnosis, flaws) for attention alone.
ATTENTION_FLAWS: list[tuple[str, Flaws]] = [
    ("missing-scale", Flaws(scale="none")),
    ("scale-by-n-embd", Flaws(scale="n_embd")),
    ("scale-by-d-k", Flaws(scale="head_size_full")),
    ("scale-multiplied", Flaws(scale="times")),
    ("missing-causal-mask", Flaws(mask="none")),
    ("mask-after-softmax", Flaws(mask="after")),
    ("softmax-wrong-axis", Flaws(softmax_dim=-2)),
    ("transposed-weight", Flaws(c_proj_transposed=True)),
]

# ... and for the whole model.
GPT2_FLAWS: list[tuple[str, Flaws]] = ATTENTION_FLAWS + [
    ("exact-gelu", Flaws(gelu="exact")),
    ("relu-activation", Flaws(gelu="relu")),
    ("layernorm-eps", Flaws(ln_eps=1e-6)),
    ("layernorm-eps", Flaws(ln_eps=1e-12)),
    ("layernorm-eps", Flaws(ln_eps=1e-8)),
    ("layernorm-unbiased-variance", Flaws(ln_unbiased=True)),
    ("missing-residual", Flaws(residual=False)),
    ("post-norm", Flaws(post_norm=True)),
    ("missing-final-layernorm", Flaws(ln_f=False)),
    ("missing-position-embedding", Flaws(position=False)),
    ("head-uses-wte", Flaws(head_from_wte=True)),
]


def layer_norm(x, weight, bias, flaws: Flaws = RIGHT):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=flaws.ln_unbiased)
    return (x - mean) / torch.sqrt(var + flaws.ln_eps) * weight + bias


def attention(
    x, c_attn_weight, c_attn_bias, c_proj_weight, c_proj_bias, n_head, flaws=RIGHT
):
    """Causal self-attention as plain functions, with optional flaws."""
    b, t, d = x.shape
    hs = d // n_head
    q, k, v = (
        z.reshape(b, n_head, t, hs)  # memory order: a "head" of whole tokens
        if flaws.split_reshaped
        else z.view(b, t, n_head, hs).transpose(1, 2)  # (b, nh, t, hs)
        for z in F.linear(x, c_attn_weight, c_attn_bias).split(d, dim=2)
    )
    att = q @ k.transpose(-2, -1)  # (b, nh, t, t)
    if flaws.scale == "head_size":
        att = att / math.sqrt(hs)
    elif flaws.scale == "n_embd":
        att = att / math.sqrt(d)
    elif flaws.scale == "head_size_full":
        att = att / hs
    elif flaws.scale == "times":
        att = att * math.sqrt(hs)
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    if flaws.mask == "before":
        att = att.masked_fill(~causal, float("-inf"))
    att = torch.softmax(att, dim=flaws.softmax_dim)
    if flaws.mask == "after":
        att = att.masked_fill(~causal, 0.0)
    y = att @ v
    y = (y if flaws.merge_viewed else y.transpose(1, 2)).contiguous().view(b, t, d)
    if flaws.c_proj_transposed:
        return y @ c_proj_weight + c_proj_bias
    return F.linear(y, c_proj_weight, c_proj_bias)


def _gelu(x, flaws: Flaws):
    if flaws.gelu == "exact":
        return F.gelu(x)
    if flaws.gelu == "relu":
        return F.relu(x)
    return F.gelu(x, approximate="tanh")


def n_layers(state_dict: dict) -> int:
    """Blocks in a reference-named state dict (transformer.h.{i}.*)."""
    ids = {int(k.split(".")[2]) for k in state_dict if k.startswith("transformer.h.")}
    return max(ids) + 1 if ids else 0


def gpt2_logits(idx, state_dict: dict, n_head: int, flaws: Flaws = RIGHT):
    """GPT-2's forward pass from a reference-named state dict, with flaws."""
    sd = state_dict
    t = idx.shape[1]
    x = sd["transformer.wte.weight"][idx]
    if flaws.position:
        x = x + sd["transformer.wpe.weight"][:t]

    def ln(name, h):
        return layer_norm(h, sd[f"{name}.weight"], sd[f"{name}.bias"], flaws)

    for i in range(n_layers(sd)):
        p = f"transformer.h.{i}"
        attn_in = x if flaws.post_norm else ln(f"{p}.ln_1", x)
        a = attention(
            attn_in,
            sd[f"{p}.attn.c_attn.weight"],
            sd[f"{p}.attn.c_attn.bias"],
            sd[f"{p}.attn.c_proj.weight"],
            sd[f"{p}.attn.c_proj.bias"],
            n_head,
            flaws,
        )
        x = x + a if flaws.residual else a
        if flaws.post_norm:
            x = ln(f"{p}.ln_1", x)
        mlp_in = x if flaws.post_norm else ln(f"{p}.ln_2", x)
        hidden = _gelu(
            F.linear(mlp_in, sd[f"{p}.mlp.c_fc.weight"], sd[f"{p}.mlp.c_fc.bias"]),
            flaws,
        )
        m = F.linear(hidden, sd[f"{p}.mlp.c_proj.weight"], sd[f"{p}.mlp.c_proj.bias"])
        x = x + m if flaws.residual else m
        if flaws.post_norm:
            x = ln(f"{p}.ln_2", x)
    if flaws.ln_f:
        x = ln("transformer.ln_f", x)
    head = sd["transformer.wte.weight" if flaws.head_from_wte else "lm_head.weight"]
    return x @ head.T


@dataclass(frozen=True)
class Variant:
    """A known wrong computation of one case, computed only when needed."""

    diagnosis: str
    compute: Callable[[], torch.Tensor]
    message: str = ""

    def text(self) -> str:
        return self.message or MISTAKES.get(self.diagnosis, self.diagnosis)


def computed(variants) -> list[tuple[str, torch.Tensor | None, str]]:
    """(diagnosis, value, message) of each variant, computed now: what an
    expectation ships (grading_engine.expected). None where the mistake does
    not apply to the case (its computation raised)."""
    rows = []
    for variant in variants:
        try:
            value = variant.compute()
        except Exception:  # noqa: BLE001 - a flaw may not apply to this case
            value = None
        rows.append((variant.diagnosis, value, variant.message))
    return rows


def shipped_variants(rows) -> list[Variant]:
    """The Variants `computed` rows stand for: each computes its value."""
    return [
        Variant(diagnosis, _value(value), message) for diagnosis, value, message in rows
    ]


def _value(value) -> Callable[[], torch.Tensor]:
    def compute() -> torch.Tensor:
        if value is None:
            raise ValueError("this mistake does not apply to the case")
        return value

    return compute


# A known wrong computation is named only when the learner's output is much
# closer to it than the true error explains: at most this fraction of the
# variant's own distance from the reference, and of the learner's distance
# from the reference. A loose match to a mistake that moves the answer about
# as much as the learner's real one does names a mistake the learner did
# not make.
DISTINCT = 0.1
# ... and this fraction when the mistake changes one number only (a loss):
# one number lands near another by chance far more often than a whole
# tensor does, and a real match is then exact to rounding.
DISTINCT_ONE_NUMBER = 1e-3


def gap(a: torch.Tensor, b: torch.Tensor) -> float:
    """The max abs difference of two same-shape tensors, in float64.

    NaN (or the same infinity) in the same place on both sides counts as
    agreement, NaN on one side as an infinite difference.
    """
    a, b = a.detach().double(), b.detach().double()
    both_nan = torch.isnan(a) & torch.isnan(b)
    diff = (a - b).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
    diff = diff.masked_fill(both_nan | (a == b), 0.0)  # -inf == -inf agrees
    return float(diff.max()) if diff.numel() else 0.0


def distinct_match(
    to_variant: float, variant_gap: float, to_reference: float, *, numbers: int = 1
) -> bool:
    """The one rule for naming a known mistake, for answers of any kind.

    `to_variant` is how far the learner's answer is from the mistake's,
    `variant_gap` how far the mistake's answer is from the right one and
    `to_reference` how far the learner's is from the right one (one
    consistent distance); `numbers` is how many numbers the mistake
    changes. Named only when the learner's answer is much closer to the
    mistake than both: otherwise the closeness is a coincidence, and the
    learner is told what differs instead of a guess.
    """
    if not variant_gap > 0:
        return False  # the mistake changes nothing here: it cannot be told apart
    fraction = DISTINCT if numbers > 1 else DISTINCT_ONE_NUMBER
    return (
        to_variant <= fraction * variant_gap and to_variant <= fraction * to_reference
    )


def tells_apart(
    got: torch.Tensor,
    variant: torch.Tensor,
    reference: torch.Tensor,
    *,
    rtol: float,
    atol: float,
) -> bool:
    """Does `got` match the known wrong `variant`: close to it within the
    tolerance, while the variant is not, and distinctly closer to it than
    to `reference` (distinct_match)?"""
    if variant.shape != got.shape or reference.shape != got.shape:
        return False
    if _close(variant, reference, rtol, atol) or not _close(got, variant, rtol, atol):
        return False
    v, r = variant.detach().double(), reference.detach().double()
    changed = ~torch.isclose(v, r, rtol=rtol, atol=atol, equal_nan=True)
    return distinct_match(
        gap(got, variant),
        gap(variant, reference),
        gap(got, reference),
        numbers=int(changed.sum()),
    )


def find_match(
    got: torch.Tensor,
    reference: torch.Tensor,
    variants: list[Variant],
    *,
    rtol: float,
    atol: float,
) -> tuple[Variant, float] | None:
    """The variant `got` matches best, if any, with its max abs error.

    A variant that equals the reference on this case cannot tell a mistake
    apart, so it is skipped; one `got` is only loosely close to is not
    named (tells_apart).
    """
    best = None
    for variant in variants:
        if ruled_out(variant.diagnosis):  # another case contradicts it
            continue
        try:
            value = variant.compute()
        except Exception:  # noqa: BLE001, S112 - a flaw may not apply to this case
            continue
        if value.shape != got.shape:
            continue
        value = value.to(reference.dtype) if value.is_floating_point() else value
        if tells_apart(got, value, reference, rtol=rtol, atol=atol):
            _, max_abs, *_ = error_report(got, value, rtol, atol)
            if best is None or max_abs < best[1]:
                best = (variant, max_abs)
    return best


def _close(a, b, rtol, atol) -> bool:
    return bool(
        torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol, equal_nan=True)
    )


def fingerprint(
    name: str,
    got: torch.Tensor,
    reference: torch.Tensor,
    variants: list[Variant],
    *,
    rtol: float,
    atol: float,
    hidden: bool = False,
    nan_agrees: bool = False,
) -> CheckResult | None:
    """A failed CheckResult naming the mistake `got` matches, or None.

    `nan_agrees`: the mistakes themselves give NaN (a softmax over nothing),
    so NaN in the same places is the match and the message says so.
    """
    match = find_match(got, reference, variants, rtol=rtol, atol=atol)
    if match is None:  # none of the exercise's own: moved or scaled numbers?
        return misplaced(
            name, got, reference, rtol=rtol, atol=atol, hidden=hidden
        ) or scaled(name, got, reference, rtol=rtol, atol=atol, hidden=hidden)
    variant, max_abs = match
    if nan_agrees and math.isinf(max_abs):
        how = "it has NaN in the same places"
    else:
        how = f"your output differs from that computation by at most {max_abs:.1e}"
    return likely_mistake(
        name, f"{variant.text()} ({how})", diagnosis=variant.diagnosis, hidden=hidden
    )


# Mistakes that let later positions leak into earlier outputs.
CAUSAL_LEAKS = {"missing-causal-mask", "mask-after-softmax", "softmax-wrong-axis"}


def causal_property(
    name: str,
    got: torch.Tensor,
    future: torch.Tensor | None,
    earlier: list[CheckResult],
    words: tuple[str, str],
    *,
    rtol: float,
    atol: float,
    hidden: bool,
) -> CheckResult:
    """Earlier outputs must not move when only later inputs change.

    The child calls the learner twice, the second time with the second half of
    the sequence changed; `future` is that second output. A property, not a
    comparison with the reference, so it catches any leak whatever its cause.
    `earlier` are the value checks of the same output (a leak they named
    is kept); `words` are (inputs, outputs) as the message calls them.
    """
    inputs, outputs = words
    check = f"{name}: causal"
    t = got.shape[1]
    k = t // 2
    if future is None or future.shape != got.shape:
        return fail(
            check,
            f"a second call with the later {inputs} changed did not "
            f"return {outputs} of the same shape",
            hidden=hidden,
        )
    bad, max_abs, *_ = error_report(future[:, :k], got[:, :k], rtol, atol)
    if bad == 0:
        return CheckResult(
            name=check,
            passed=True,
            message=f"changing {inputs} {k}..{t - 1} left the {outputs} at "
            f"0..{k - 1} unchanged",
            hidden=hidden,
        )
    return fail(
        check,
        f"changing only {inputs} {k}..{t - 1} changed your {outputs} at "
        f"positions 0..{k - 1} (max change {max_abs:.1e}): the future leaks "
        "into the past. Mask the attention scores above the diagonal with "
        "-inf before the softmax, and normalise over the last axis",
        diagnosis=next(
            (r.diagnosis for r in earlier if r.diagnosis in CAUSAL_LEAKS),
            "missing-causal-mask",
        ),
        hidden=hidden,
    )
