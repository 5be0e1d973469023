"""causal-mask-weights: attention weights from scores under the causal mask.

Scores are (..., t_q, t_k) with t_k >= t_q: the queries are the LAST t_q
positions of a sequence of t_k, as when new tokens attend to a KV cache, so
query i may see keys 0 .. i + (t_k - t_q). One case puts very large scores
in the future cells, where masking after the softmax (even with a
renormalisation) loses every visible weight to underflow.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import seed_cases
from grading_engine.exercises.kit.runs import calls

SLUG = "causal-mask-weights"
ENTRY_POINT = "causal_attention_weights"
SIGNATURE = "causal_attention_weights(scores) -> Tensor"

RTOL, ATOL = 1e-4, 1e-6

MESSAGES = {
    "mask-after-softmax": (
        "your weights match a softmax over ALL keys with the future zeroed "
        "afterwards: the rows no longer sum to 1 and the past weights were "
        "normalised against future scores. Fill the future scores with -inf "
        "BEFORE the softmax"
    ),
    "renormalised-after-softmax": (
        "your weights match a softmax over all keys, future zeroed, then each "
        "row divided by its sum: exact in theory, but when a future score is "
        "much larger than the visible ones, the visible weights underflow to "
        "0 and the division gives 0/0 = NaN. Mask with -inf before the softmax"
    ),
    "mask-not-offset": (
        "your mask treats query i as position i, but here the queries are the "
        "last t_q of t_k positions (t_k > t_q, as with a KV cache): query i "
        "is at position i + (t_k - t_q) and may see that many more keys. Use "
        "torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)"
    ),
    "mask-wrong-side": (
        "your weights put the mass on the future (keys j >= i) and hide the "
        "past: the allowed region is the lower triangle, j <= i, so mask "
        "with .triu(1) (or keep .tril())"
    ),
    "mask-with-zero": (
        "your weights match future scores set to 0, not -inf: exp(0) = 1, so "
        "the future still gets weight. Use masked_fill(mask, float('-inf'))"
    ),
    "masked-diagonal": (
        "your mask also hides the diagonal (j = i): a position may attend to "
        "itself, and on a square matrix query 0 then has no key left: 0/0 = "
        "NaN. Mask only j > i, i.e. .triu(diagonal=1)"
    ),
    "mask-offset-sign": (
        "your mask shifts the diagonal the wrong way (tril(diagonal=t_q - "
        "t_k)): with a cache, query i is LATER than position i, at i + (t_k - "
        "t_q), so it sees more keys, not fewer. Use tril(diagonal=t_k - t_q)"
    ),
    "mask-sees-next-key": (
        "your mask is off by one at the boundary: each query also sees the "
        "key right after its own position (tril(diagonal=t_k - t_q + 1), or "
        "j <= i + 1). A query sees keys up to and including its own position "
        "and not one further: tril(diagonal=t_k - t_q)"
    ),
    "softmax-wrong-axis": (
        "your weights match a softmax over the query axis (dim=-2): each "
        "query's weights over the keys must sum to 1, so normalise over the "
        "last axis, softmax(dim=-1)"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "square (2, 3, 5, 5)", "hidden": False, "lead": [2, 3], "tq": 5},
        {
            "name": "2 new queries over 6 keys (a KV cache)",
            "hidden": False,
            "lead": [1, 2],
            "tq": 2,
            "tk": 6,
        },
        {
            "name": "future scores 300 above the past",
            "hidden": False,
            "lead": [1, 2],
            "tq": 4,
            "future_boost": 300.0,
        },
        {
            "name": "hidden: one new token over the cache",
            "hidden": True,
            "lead": [rng.randint(1, 3), rng.randint(2, 4)],
            "tq": 1,
            "tk": rng.randint(5, 12),
        },
    ]
    tq = rng.randint(2, 8)
    cases.append(
        {
            "name": "hidden: one key more than queries",
            "hidden": True,
            "lead": [rng.randint(1, 3), rng.randint(2, 4)],
            "tq": tq,
            "tk": tq + 1,
        }
    )
    for i in range(2):
        tq = rng.randint(3, 9)
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "lead": [rng.randint(1, 3), rng.randint(2, 6)],
                "tq": tq,
                "tk": tq + (rng.randint(1, 7) if i else 0),
                "scale": rng.choice([1.0, 3.0, 10.0]),
            }
        )
    for case in cases:
        case.setdefault("tk", case["tq"])
    return seed_cases(cases, rng)


def visible(tq: int, tk: int) -> torch.Tensor:
    """(t_q, t_k) bool: True where query i (position i + tk - tq) sees key j."""
    return torch.ones(tq, tk, dtype=torch.bool).tril(diagonal=tk - tq)


def inputs(case: dict) -> torch.Tensor:
    g = torch.Generator().manual_seed(case["seed"])
    tq, tk = case["tq"], case["tk"]
    scores = torch.randn(*case["lead"], tq, tk, generator=g) * case.get("scale", 2.0)
    boost = case.get("future_boost")
    if boost:
        scores = scores + (~visible(tq, tk)).float() * boost
    return scores


def reference(scores: torch.Tensor) -> torch.Tensor:
    tq, tk = scores.shape[-2:]
    s = scores.double().masked_fill(~visible(tq, tk), float("-inf"))
    return s.softmax(dim=-1).float()


def _variants(scores: torch.Tensor) -> list[Variant]:
    """The usual mistakes, in float32 like the learner's code (NaNs and all)."""
    tq, tk = scores.shape[-2:]
    keep = visible(tq, tk)
    square = torch.ones(tq, tk, dtype=torch.bool)

    def after():
        return scores.softmax(dim=-1) * keep

    def renormalised():
        p = after()
        return p / p.sum(dim=-1, keepdim=True)

    def masked(allowed):
        return scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1)

    compute = {
        "mask-after-softmax": after,
        "renormalised-after-softmax": renormalised,
        "mask-not-offset": lambda: masked(square.tril()),
        "mask-wrong-side": lambda: masked(square.triu()),
        "mask-with-zero": lambda: scores.masked_fill(~keep, 0.0).softmax(dim=-1),
        "masked-diagonal": lambda: masked(square.tril(diagonal=tk - tq - 1)),
        "mask-offset-sign": lambda: masked(square.tril(diagonal=tq - tk)),
        "mask-sees-next-key": lambda: masked(square.tril(diagonal=tk - tq + 1)),
        "softmax-wrong-axis": lambda: scores.masked_fill(~keep, float("-inf")).softmax(
            dim=-2
        ),
    }
    if tk - tq == 1:
        # One key more than queries: hiding the diagonal and forgetting the
        # offset give the same mask, so neither can be told apart here.
        del compute["mask-not-offset"], compute["masked-diagonal"]
    return [Variant(d, fn, MESSAGES[d]) for d, fn in compute.items()]


run_case = calls(inputs)


check_case = tensor_compared(
    inputs,
    nan_agrees=True,  # NaN where the mistake has NaN counts as agreement
    axes=("batch", "n_head", "t_q", "t_k"),
    what="the attention weights",
)
