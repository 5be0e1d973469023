"""grouped-query-attention: causal attention with fewer key/value heads.

q has n_head heads, k and v have n_kv_head, and n_head is a multiple of
n_kv_head. Query head h reads key/value head h // (n_head // n_kv_head):
consecutive query heads share one key/value head, as in Ainslie et al.
(2023) and Hugging Face's `repeat_kv`. Cases cover GQA, MQA (one key/value
head) and plain multi-head attention (as many key/value heads as queries).
"""

from __future__ import annotations

import math
import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.tensors import (
    check_no_error,
    compare_tensor,
    failed,
    run_and_capture,
)

SLUG = "grouped-query-attention"
ENTRY_POINT = "grouped_query_attention"
SIGNATURE = "grouped_query_attention(q, k, v) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

ERRORS = [
    (
        "must match the size of tensor b",
        "kv-heads-not-repeated",
        "q has n_head heads but k and v have n_kv_head: give every query head "
        "its group's key/value head first, e.g. "
        "k.repeat_interleave(n_head // n_kv_head, dim=1)",
    ),
]

MESSAGES = {
    "kv-heads-tiled": (
        "your output matches key/value heads repeated as a block (k.repeat(1, "
        "n_rep, 1, 1)), which gives query head h the key/value head h % "
        "n_kv_head. Groups are consecutive: query heads 0..n_rep-1 share "
        "key/value head 0, so use k.repeat_interleave(n_rep, dim=1)"
    ),
    "missing-causal-mask": (
        "your output matches attention without the causal mask: position i "
        "may only attend to positions j <= i"
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
            "name": "GQA: 12 query heads, 4 kv heads",
            "hidden": False,
            "nh": 12,
            "nkv": 4,
        },
        {"name": "MQA: 8 query heads, 1 kv head", "hidden": False, "nh": 8, "nkv": 1},
        {"name": "MHA: 4 and 4", "hidden": False, "nh": 4, "nkv": 4},
    ]
    for i in range(2):
        nkv = rng.choice([2, 3, 4])
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "nh": nkv * rng.choice([2, 3, 4]),
                "nkv": nkv,
            }
        )
    for i, case in enumerate(cases):
        case["b"] = rng.randint(1, 2) if case["hidden"] else 2
        case["t"] = rng.randint(4, 9) if case["hidden"] else 5
        case["hs"] = rng.choice([8, 16]) if case["hidden"] else 8
        case["seed"] = rng.randrange(2**31) if case["hidden"] else i
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(case["seed"])
    b, t, hs = case["b"], case["t"], case["hs"]
    q = torch.randn(b, case["nh"], t, hs, generator=g)
    k = torch.randn(b, case["nkv"], t, hs, generator=g)
    v = torch.randn(b, case["nkv"], t, hs, generator=g)
    return q, k, v


def attend(q, k, v, *, repeat="interleave", mask=True, scale=True) -> torch.Tensor:
    rep = q.shape[1] // k.shape[1]
    if repeat == "interleave":
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    else:
        k, v = k.repeat(1, rep, 1, 1), v.repeat(1, rep, 1, 1)
    s = q.double() @ k.double().transpose(-2, -1)
    if scale:
        s = s / math.sqrt(q.shape[-1])
    if mask:
        t = q.shape[-2]
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
    return (s.softmax(dim=-1) @ v.double()).float()


def run_case(fn, case: dict):
    return run_and_capture(fn, *inputs(case))


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    q, k, v = inputs(case)
    expected = attend(q, k, v)
    got = tensors.get("output")
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "n_head", "time", "head_size"),
        sizes={"n_kv_head": case["nkv"]},
        rtol=RTOL,
        atol=ATOL,
        what="the attention output",
        hidden=hidden,
    )
    if failed(results) and got is not None and got.shape == expected.shape:
        variants = [
            Variant(
                "kv-heads-tiled",
                lambda: attend(q, k, v, repeat="tile"),
                MESSAGES["kv-heads-tiled"],
            ),
            Variant(
                "missing-causal-mask",
                lambda: attend(q, k, v, mask=False),
                MESSAGES["missing-causal-mask"],
            ),
            Variant(
                "missing-scale",
                lambda: attend(q, k, v, scale=False),
                MESSAGES["missing-scale"],
            ),
        ]
        match = fingerprint(
            name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
        )
        if match:
            results.append(match)
    return results
