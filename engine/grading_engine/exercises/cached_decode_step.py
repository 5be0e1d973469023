"""cached-decode-step: a full GPT-2 forward for new tokens only, with a KV cache.

The learner writes decode_step(model, idx, cache) -> (logits, cache): run the
new tokens idx (b, t_new) through the reference model's own modules, reusing
every layer's cached keys and values, and return the logits of the new
positions and the cache extended by them. The child feeds a sequence in
chunks (a prefill, single tokens, then a few tokens at once); the
concatenated logits must equal one full forward of the whole sequence. That
is the property that makes a KV cache correct, and each usual slip breaks it
in a recognisable way: positions restarting at 0, a causal mask that ignores
the cache's offset, a cache that is never extended, no mask in the prefill.
"""

from __future__ import annotations

import math
import random

import torch
from torch.nn import functional as F

from grading_engine.checks.fingerprints import (
    Variant,
    computed,
    fingerprint,
    shipped_variants,
)
from grading_engine.checks.in_place import input_changes
from grading_engine.checks.learner_calls import call_learner, capture_tensor
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import case_error, compare_tensor, failed
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.reference import build_model, get_config
from grading_engine.reference.cache import reference_model

SLUG = "cached-decode-step"
ENTRY_POINT = "decode_step"
SIGNATURE = "decode_step(model, idx, cache) -> tuple[Tensor, list]"

RTOL, ATOL = 1e-4, 1e-4

ERRORS = [
    (
        "sizes of tensors must match except in dimension 1",
        "cat-wrong-axis",
        "the cached keys and the new ones differ in length, and dim 1 of "
        "(b, n_head, t, head_size) is the head axis: append along time, dim=2",
    ),
]

MESSAGES = {
    "position-not-offset": (
        "your logits match a decoder whose new tokens are embedded at positions "
        "0, 1, ... on every call: the first new token sits at position t_past "
        "(the cache's length), so add wpe(torch.arange(t_past, t_past + t_new))"
    ),
    "mask-not-offset": (
        "your logits match a causal mask that ignores the cache: new token i is "
        "position t_past + i and may see keys 0 .. t_past + i, so build the "
        "(t_new, t_past + t_new) mask with .tril(diagonal=t_past)"
    ),
    "cache-not-updated": (
        "your logits match a decoder whose cache never grows: return the keys "
        "and values with the new positions appended, or the next call forgets "
        "everything before it"
    ),
    "missing-causal-mask": (
        "your logits match attention with no mask: when several new tokens "
        "arrive at once (the prefill), token i must not see the new tokens "
        "after it"
    ),
    "mask-sees-next-key": (
        "your logits match a causal mask that is off by one at the boundary: "
        "new token i also sees new token i + 1 (tril(diagonal=t_past + 1)). "
        "New token i is position t_past + i and sees keys 0 .. t_past + i, "
        "itself included, nothing later: .tril(diagonal=t_past)"
    ),
    "cache-holds-last-step": (
        "your logits match a decoder whose cache holds only the LAST call's "
        "keys and values: store the concatenation (past + new) in the cache, "
        "not the new keys alone, or each step forgets every token before the "
        "previous call"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("mini: prefill 4, then 3 single tokens", False,
                 config="mini", b=1, chunks=[4, 1, 1, 1], seed=1),
        new_case("tiny: token by token from an empty cache", False,
                 config="tiny", b=2, chunks=[1] * 6, seed=2),
        new_case("mini: prefill 3, one token, then a chunk of 3", False,
                 config="mini", b=2, chunks=[3, 1, 3], seed=3),
    ]  # fmt: skip
    for i in range(3):
        config = rng.choice(["tiny", "mini"])
        limit = 16 if config == "tiny" else 32
        chunks = [rng.randint(2, 6)]
        while sum(chunks) < limit - 6 and len(chunks) < 7:
            chunks.append(rng.choice([1, 1, 2, 3]))
        if i == 2:  # every draw fills one cache up to the last position
            chunks.append(limit - sum(chunks))
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                config=config,
                b=rng.randint(1, 3),
                chunks=chunks,
                seed=rng.randrange(2**31),
            )
        )
    return cases


def sequence(case: dict, vocab_size: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(case["seed"])
    return torch.randint(0, vocab_size, (case["b"], sum(case["chunks"])), generator=g)


def run_case(fn, case: dict):
    model = build_model(case["config"])  # the child's own copy: it may be mutated
    idx = sequence(case, model.config.vocab_size)
    cache, outs, start = None, [], 0
    data: dict = {"error": None}
    for n in case["chunks"]:
        with torch.no_grad():
            value, error = call_learner(fn, model, idx[:, start : start + n], cache)
        if error:
            data["error"] = error
            return data, {}
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            data["not_pair"] = capture_tensor(value)[0]
            return data, {}
        logits, cache = value
        info, tensor = capture_tensor(logits)
        if (
            tensor is None
            or tensor.dim() != 3
            or tuple(tensor.shape[:2]) != (idx.shape[0], n)
        ):
            data["bad_step"] = {
                "at": start,
                "n": n,
                "info": info,
                "shape": list(tensor.shape) if tensor is not None else None,
            }
            return data, {}
        outs.append(tensor)
        start += n
    data["output"] = {"type": "torch.Tensor", "dtype": str(outs[0].dtype)}
    data["cache_len"] = len(cache) if isinstance(cache, (list, tuple)) else None
    try:
        data["cache_k_shape"] = list(cache[0][0].shape)
    except Exception:  # noqa: BLE001 - any cache layout is the learner's
        data["cache_k_shape"] = None
    return data, {"output": torch.cat(outs, dim=1)}


def decode(model, idx, chunks, *, flaw: str | None = None) -> torch.Tensor:
    """The parent's cached decoder, right or with one named flaw."""
    tr = model.transformer
    cache: list | None = None
    outs, start = [], 0
    for n in chunks:
        x_idx = idx[:, start : start + n]
        t_past = 0 if cache is None else cache[0][0].shape[2]
        p0 = 0 if flaw == "position-not-offset" else t_past
        x = tr.wte(x_idx) + tr.wpe(torch.arange(p0, p0 + n))
        new_cache = []
        for i, block in enumerate(tr.h):
            B, T, C = x.shape
            nh = block.attn.n_head
            q, k, v = (
                z.view(B, T, nh, C // nh).transpose(1, 2)
                for z in block.attn.c_attn(block.ln_1(x)).split(C, dim=2)
            )
            k_step, v_step = k, v
            if cache is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            last_step_only = flaw == "cache-holds-last-step"
            new_cache.append((k_step, v_step) if last_step_only else (k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // nh)
            t_all = k.shape[2]
            if flaw != "missing-causal-mask":
                diagonal = 0 if flaw == "mask-not-offset" else t_all - T
                diagonal += flaw == "mask-sees-next-key"
                visible = torch.ones(T, t_all, dtype=torch.bool).tril(diagonal)
                att = att.masked_fill(~visible, float("-inf"))
            y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
            x = x + block.attn.c_proj(y)
            x = x + block.mlp(block.ln_2(x))
        cache = None if flaw == "cache-not-updated" else new_cache
        outs.append(model.lm_head(tr.ln_f(x)))
        start += n
    return torch.cat(outs, dim=1)


def _shape_problem(name, case, data, vocab_size, hidden) -> CheckResult | None:
    """A step that returned no (logits, cache) pair, or logits of a wrong shape."""
    if "not_pair" in data:
        kind = (data["not_pair"] or {}).get("type", "?")
        return fail(
            name,
            f"expected a pair (logits, cache), got a {kind}: return "
            "the new positions' logits and the extended cache",
            hidden=hidden,
        )
    if "bad_step" not in data:
        return None
    bad = data["bad_step"]
    shape = bad.get("shape")
    return fail(
        f"{name}: step at position {bad.get('at')}",
        f"for {bad.get('n')} new token(s) the logits must be (b, t_new, V) = "
        f"({case['b']}, {bad.get('n')}, {vocab_size}); got "
        + (
            f"shape {tuple(shape)}"
            if shape
            else f"a {(bad.get('info') or {}).get('type', '?')}"
        )
        + ": return logits for the new positions only, not the whole sequence",
        hidden=hidden,
    )


def _cache_check(name, case, data, c, hidden) -> list[CheckResult]:
    """After the last step: one (k, v) per layer, k covering every token."""
    want = [case["b"], c.n_head, sum(case["chunks"]), c.n_embd // c.n_head]
    if data.get("cache_len") == c.n_layer and data.get("cache_k_shape") == want:
        return []
    return [
        fail(
            f"{name}: cache",
            f"after the last step the cache should be a list of {c.n_layer} "
            f"(k, v) pairs with k of shape {tuple(want)} (b, n_head, tokens, "
            f"head_size); got {data.get('cache_len')} entries, first k "
            f"{data.get('cache_k_shape')}",
            hidden=hidden,
        )
    ]


def _variants(model, idx, chunks) -> list[Variant]:
    def compute(flaw):
        with torch.no_grad():
            return decode(model, idx, chunks, flaw=flaw)

    return [
        Variant(flaw, lambda flaw=flaw: compute(flaw), MESSAGES[flaw])
        for flaw in MESSAGES
    ]


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The answer's checks, and one for an argument changed in place."""
    changed = input_changes(case["name"], data, hidden=bool(case["hidden"]))
    return changed + _check_answer(case, data, tensors)


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The logits of every step, concatenated (shipped for the visible cases)."""
    model = reference_model(case["config"])
    with torch.no_grad():
        return model(sequence(case, model.config.vocab_size))


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    model = reference_model(case["config"])
    idx = sequence(case, model.config.vocab_size)
    return computed(_variants(model, idx, case["chunks"]))


def _check_answer(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data, ERRORS):
        return raised
    c = get_config(case["config"])
    if problem := _shape_problem(name, case, data, c.vocab_size, hidden):
        return [problem]
    expected = expected_output(case)
    results = compare_tensor(
        name,
        data.get("output"),
        tensors.get("output"),
        expected,
        axes=("batch", "time", "vocab"),
        sizes={"vocab_size": c.vocab_size},
        rtol=RTOL,
        atol=ATOL,
        what="the logits (all steps, concatenated)",
        dtype_hint="keep float32",
        hidden=hidden,
    )
    results += _cache_check(name, case, data, c, hidden)
    got = tensors.get("output")
    if not failed(results) or got is None or got.shape != expected.shape:
        return results
    variants = shipped_variants(known_mistakes(case))
    match = fingerprint(
        name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
    )
    return results + [match] if match else results
