"""kv-cache-step: one decoding step of attention against a KV cache.

The learner appends the new keys and values to the cache along the time
axis and lets the new queries attend over past and new positions, new query
i sitting at position t_past + i. Cases cover a prefill (empty cache), one
new token, and several new tokens at once (chunked prefill), where the mask
needs its offset.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks import heads
from grading_engine.checks.answers import tensor_answer
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.learner_calls import capture_parts
from grading_engine.checks.result import CheckResult, likely_mistake
from grading_engine.checks.tensors import case_error, failed, missing_parts
from grading_engine.exercises.kit.cases import new_case, normal, size_cases
from grading_engine.expected import expectation

SLUG = "kv-cache-step"
ENTRY_POINT = "attend_with_cache"
SIGNATURE = (
    "attend_with_cache(q, k_new, v_new, k_cache, v_cache) -> "
    "tuple[Tensor, Tensor, Tensor]"
)

RTOL, ATOL = 1e-4, 1e-5
OUTPUTS = ("y", "k_all", "v_all")
NOT_A_TRIPLE = (
    "expected a triple (y, k_all, v_all), got a {kind}: return the "
    "output and both extended caches"
)

ERRORS = [
    (
        "sizes of tensors must match except in dimension 1",
        "cat-wrong-axis",
        "the cache and the new keys differ in length, and dim 1 is the head "
        "axis of (b, n_head, t, head_size): append along time, "
        "torch.cat([k_cache, k_new], dim=2)",
    ),
]

MESSAGES = {
    "new-token-not-attended": (
        "your output matches attention over the cache alone: the new "
        "positions must also see themselves (and the earlier new ones), so "
        "append k_new and v_new BEFORE attending"
    ),
    "mask-not-offset": (
        "your output matches a square causal mask that ignores the cache: new "
        "query i is position t_past + i and may see keys 0 .. t_past + i, so "
        "build the mask with .tril(diagonal=t_past)"
    ),
    "missing-causal-mask": (
        "your output matches attention with no mask: with several new tokens, "
        "new token i must not see new tokens after it"
    ),
    "missing-scale": (
        "your output matches attention without 1/sqrt(head_size): scale the "
        "scores before the softmax"
    ),
    "mask-sees-next-key": (
        "your mask is off by one at the boundary: new query i also sees new "
        "key i + 1 (tril(diagonal=t_past + 1)). Query i is position t_past + "
        "i and sees keys 0 .. t_past + i, itself included, nothing later: "
        "tril(diagonal=t_past)"
    ),
    "scale-by-time": (
        "your output matches scores divided by sqrt of the number of keys "
        "(t_past + t_new, axis -2 of k_all): the scale is 1 / sqrt(head_size), "
        "the size of the LAST axis, the one the dot product sums over"
    ),
    "scale-by-d-k": (
        "your output matches scores divided by head_size itself: the scale "
        "is 1 / sqrt(head_size), the standard deviation of a dot product of "
        "head_size unit-variance terms; dividing by head_size flattens the "
        "softmax"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("prefill: empty cache, 5 tokens", False, past=0, new=5),
        new_case("one new token over 6 cached", False, past=6, new=1),
        new_case("3 new tokens over 4 cached", False, past=4, new=3),
        new_case("hidden: one token", True, past=rng.randint(7, 20), new=1),
    ]
    for i in range(2):
        cases.append(
            new_case(
                f"hidden chunk {i + 1}",
                True,
                past=rng.randint(2, 12),
                new=rng.randint(2, 6),
            )
        )
    return size_cases(
        cases,
        rng,
        {"b": 2, "nh": 2, "hs": 8},
        lambda: {
            "b": rng.randint(1, 2),
            "nh": rng.choice([2, 3, 4]),
            "hs": rng.choice([8, 16]),
        },
    )


def inputs(case: dict) -> list[torch.Tensor]:
    """[q, k_new, v_new, k_cache, v_cache], all (b, n_head, t, head_size)."""
    b, nh, hs = case["b"], case["nh"], case["hs"]
    new, past = (b, nh, case["new"], hs), (b, nh, case["past"], hs)
    return normal(case["seed"], new, new, new, past, past)


def attend(q, k, v, *, mask: str | None = "causal", scale: bool = True):
    return heads.attend(q, k, v, scale="d_k" if scale else "none", mask=mask).float()


def reference(args):
    q, k_new, v_new, k_cache, v_cache = args
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    return attend(q, k_all, v_all), k_all, v_all


def run_case(fn, case: dict):
    return capture_parts(fn, inputs(case), OUTPUTS)


def _swapped(args, key: str) -> torch.Tensor | None:
    """The cache with the new entries in front, None for an empty cache
    (both orders are then the same)."""
    _, k_new, v_new, k_cache, v_cache = args
    new, old = (k_new, k_cache) if key == "k_all" else (v_new, v_cache)
    if not old.shape[2]:
        return None
    return torch.cat([new, old], dim=2)


@expectation
def expected_outputs(case: dict) -> dict:
    """y, k_all and v_all (shipped for the visible cases)."""
    return dict(zip(OUTPUTS, reference(inputs(case)), strict=True))


@expectation
def known_mistakes(case: dict) -> dict:
    """What the known mistakes give: y's, and each cache's in the wrong
    order (shipped for the visible cases)."""
    args = inputs(case)
    expected = dict(zip(OUTPUTS, reference(args), strict=True))
    return {
        "y": computed(_variants(args, expected)),
        "swapped": {key: _swapped(args, key) for key in OUTPUTS[1:]},
    }


def _cache_mistake(name, key, got, case, hidden) -> list[CheckResult]:
    """The new entries put in front of the cache instead of after it."""
    swapped = known_mistakes(case)["swapped"][key]
    if swapped is None:
        return []  # an empty cache: both orders are the same
    if got.shape == swapped.shape and torch.equal(got, swapped):
        return [
            likely_mistake(
                f"{name}: {key}",
                "the new entries are in front of the cache: position order is "
                "time order, so append at the end, torch.cat([cache, new], dim=2)",
                diagnosis="cache-order",
                hidden=hidden,
            )
        ]
    return []


def _attend_with(q, k, v, *, diagonal_extra: int = 0, scale: float | None = None):
    """Causal attention over a cache with the mask's diagonal moved by
    `diagonal_extra` and an explicit score scale, in float64."""
    q, k, v = q.double(), k.double(), v.double()
    t_q, t_k = q.shape[2], k.shape[2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    visible = torch.ones(t_q, t_k, dtype=torch.bool).tril(t_k - t_q + diagonal_extra)
    return (scores.masked_fill(~visible, float("-inf")).softmax(-1) @ v).float()


def _variants(args, expected: dict) -> list[Variant]:
    q, _, _, k_cache, v_cache = args
    k_all, v_all = expected["k_all"], expected["v_all"]
    return [
        Variant(
            "mask-sees-next-key",
            lambda: _attend_with(q, k_all, v_all, diagonal_extra=1),
            MESSAGES["mask-sees-next-key"],
        ),
        Variant(
            "scale-by-time",
            lambda: _attend_with(q, k_all, v_all, scale=k_all.shape[2] ** -0.5),
            MESSAGES["scale-by-time"],
        ),
        Variant(
            "scale-by-d-k",
            lambda: _attend_with(q, k_all, v_all, scale=1 / q.shape[-1]),
            MESSAGES["scale-by-d-k"],
        ),
        Variant(
            "new-token-not-attended",
            lambda: attend(q, k_cache, v_cache, mask=None),
            MESSAGES["new-token-not-attended"],
        ),
        Variant(
            "mask-not-offset",
            lambda: attend(q, k_all, v_all, mask="square"),
            MESSAGES["mask-not-offset"],
        ),
        Variant(
            "missing-causal-mask",
            lambda: attend(q, k_all, v_all, mask=None),
            MESSAGES["missing-causal-mask"],
        ),
        Variant(
            "missing-scale",
            lambda: attend(q, k_all, v_all, scale=False),
            MESSAGES["missing-scale"],
        ),
    ]


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data, ERRORS):
        return raised
    if missing := missing_parts(name, data, 3, NOT_A_TRIPLE, hidden=hidden):
        return missing
    expected = expected_outputs(case)
    results = []
    for key in OUTPUTS:
        found = tensor_answer(
            f"{name}: {key}",
            data,
            tensors,
            expected[key],
            key=key,
            check_inputs=key == OUTPUTS[0],
            variants=(lambda: shipped_variants(known_mistakes(case)["y"]))
            if key == "y"
            else (),
            axes=("batch", "n_head", "time", "head_size"),
            sizes={"t_past": case["past"], "t_new": case["new"]},
            rtol=RTOL,
            atol=ATOL,
            what="the attention output" if key == "y" else f"the extended {key}",
            hidden=hidden,
        )
        results += found
        got = tensors.get(key)
        if key != "y" and failed(found) and isinstance(got, torch.Tensor):
            results += _cache_mistake(name, key, got, case, hidden)
    return results
