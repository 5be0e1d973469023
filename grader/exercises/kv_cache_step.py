"""kv-cache-step: one decoding step of attention against a KV cache.

The learner appends the new keys and values to the cache along the time
axis and lets the new queries attend over past and new positions, new query
i sitting at position t_past + i. Cases cover a prefill (empty cache), one
new token, and several new tokens at once (chunked prefill), where the mask
needs its offset.
"""

from __future__ import annotations

import math
import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.result import CheckResult
from grader.checks.tensors import (
    call_learner,
    capture_tensor,
    check_no_error,
    compare_tensor,
    failed,
)

SLUG = "kv-cache-step"
ENTRY_POINT = "attend_with_cache"
SIGNATURE = (
    "attend_with_cache(q, k_new, v_new, k_cache, v_cache) -> "
    "tuple[Tensor, Tensor, Tensor]"
)

RTOL, ATOL = 1e-4, 1e-5
OUTPUTS = ("y", "k_all", "v_all")

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
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "prefill: empty cache, 5 tokens",
            "hidden": False,
            "past": 0,
            "new": 5,
        },
        {"name": "one new token over 6 cached", "hidden": False, "past": 6, "new": 1},
        {"name": "3 new tokens over 4 cached", "hidden": False, "past": 4, "new": 3},
        {
            "name": "hidden: one token",
            "hidden": True,
            "past": rng.randint(7, 20),
            "new": 1,
        },
    ]
    for i in range(2):
        cases.append(
            {
                "name": f"hidden chunk {i + 1}",
                "hidden": True,
                "past": rng.randint(2, 12),
                "new": rng.randint(2, 6),
            }
        )
    for i, case in enumerate(cases):
        case["b"] = rng.randint(1, 2) if case["hidden"] else 2
        case["nh"] = rng.choice([2, 3, 4]) if case["hidden"] else 2
        case["hs"] = rng.choice([8, 16]) if case["hidden"] else 8
        case["seed"] = rng.randrange(2**31) if case["hidden"] else i
    return cases


def inputs(case: dict) -> list[torch.Tensor]:
    """[q, k_new, v_new, k_cache, v_cache], all (b, n_head, t, head_size)."""
    g = torch.Generator().manual_seed(case["seed"])
    b, nh, hs = case["b"], case["nh"], case["hs"]

    def draw(t):
        return torch.randn(b, nh, t, hs, generator=g)

    new, past = case["new"], case["past"]
    return [draw(new), draw(new), draw(new), draw(past), draw(past)]


def attend(q, k, v, *, mask: str = "offset", scale: bool = True) -> torch.Tensor:
    t_q, t_k = q.shape[-2], k.shape[-2]
    s = q.double() @ k.double().transpose(-2, -1)
    if scale:
        s = s / math.sqrt(q.shape[-1])
    if mask != "none":
        offset = t_k - t_q if mask == "offset" else 0
        visible = torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=offset)
        s = s.masked_fill(~visible, float("-inf"))
    return (s.softmax(dim=-1) @ v.double()).float()


def reference(args):
    q, k_new, v_new, k_cache, v_cache = args
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    return attend(q, k_all, v_all), k_all, v_all


def run_case(fn, case: dict):
    value, error = call_learner(fn, *inputs(case))
    data: dict = {"error": error, "kind": capture_tensor(value)[0]}
    tensors: dict = {}
    if isinstance(value, (tuple, list)) and len(value) == 3:
        data["length"] = 3
        for key, item in zip(OUTPUTS, value, strict=True):
            data[key], tensor = capture_tensor(item)
            if tensor is not None:
                tensors[key] = tensor
    return data, tensors


def _cache_mistake(key, got, args) -> CheckResult | None:
    """The new entries put in front of the cache instead of after it."""
    _, k_new, v_new, k_cache, v_cache = args
    new, old = (k_new, k_cache) if key == "k_all" else (v_new, v_cache)
    if not old.shape[2]:
        return None  # an empty cache: both orders are the same
    swapped = torch.cat([new, old], dim=2)
    if got.shape == swapped.shape and torch.equal(got, swapped):
        return CheckResult(
            f"{key}: likely mistake",
            False,
            "the new entries are in front of the cache: position order is time "
            "order, so append at the end, torch.cat([cache, new], dim=2)",
            diagnosis="cache-order",
        )
    return None


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    if data.get("length") != 3:
        kind = (data.get("kind") or {}).get("type", "?")
        return [
            CheckResult(
                name,
                False,
                f"expected a triple (y, k_all, v_all), got a {kind}: return the "
                "output and both extended caches",
                hidden=hidden,
            )
        ]
    args = inputs(case)
    q, k_new, v_new, k_cache, v_cache = args
    expected = dict(zip(OUTPUTS, reference(args), strict=True))
    results = []
    for key in OUTPUTS:
        got = tensors.get(key)
        found = compare_tensor(
            f"{name}: {key}",
            data.get(key),
            got,
            expected[key],
            axes=("batch", "n_head", "time", "head_size"),
            sizes={"t_past": case["past"], "t_new": case["new"]},
            rtol=RTOL,
            atol=ATOL,
            what="the attention output" if key == "y" else f"the extended {key}",
            hidden=hidden,
        )
        results += found
        if not failed(found) or not isinstance(got, torch.Tensor):
            continue
        if key == "y" and got.shape == expected["y"].shape:
            variants = [
                Variant(
                    "new-token-not-attended",
                    lambda: attend(q, k_cache, v_cache, mask="none"),
                    MESSAGES["new-token-not-attended"],
                ),
                Variant(
                    "mask-not-offset",
                    lambda: attend(
                        q, expected["k_all"], expected["v_all"], mask="square"
                    ),
                    MESSAGES["mask-not-offset"],
                ),
                Variant(
                    "missing-causal-mask",
                    lambda: attend(
                        q, expected["k_all"], expected["v_all"], mask="none"
                    ),
                    MESSAGES["missing-causal-mask"],
                ),
                Variant(
                    "missing-scale",
                    lambda: attend(
                        q, expected["k_all"], expected["v_all"], scale=False
                    ),
                    MESSAGES["missing-scale"],
                ),
            ]
            match = fingerprint(
                f"{name}: y",
                got,
                expected["y"],
                variants,
                rtol=RTOL,
                atol=ATOL,
                hidden=hidden,
            )
            if match:
                results.append(match)
        elif key != "y":
            mistake = _cache_mistake(key, got, args)
            if mistake:
                results.append(
                    CheckResult(
                        f"{name}: {mistake.name}",
                        False,
                        mistake.message,
                        diagnosis=mistake.diagnosis,
                        hidden=hidden,
                    )
                )
    return results
