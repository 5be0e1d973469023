"""grouped-query-attention: causal attention with fewer key/value heads.

q has n_head heads, k and v have n_kv_head, and n_head is a multiple of
n_kv_head. Query head h reads key/value head h // (n_head // n_kv_head):
consecutive query heads share one key/value head, as in Ainslie et al.
(2023) and Hugging Face's `repeat_kv`. Cases cover GQA, MQA (one key/value
head) and plain multi-head attention (as many key/value heads as queries).
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks import heads
from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import new_case, normal, size_cases
from grading_engine.exercises.kit.runs import calls

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
    "scale-by-d-k": (
        "your output matches scores divided by head_size itself: the scale "
        "is 1 / sqrt(head_size), the standard deviation of a dot product of "
        "head_size unit-variance terms; dividing by head_size flattens the "
        "softmax"
    ),
    "mask-sees-next-key": (
        "your mask is off by one: position i also sees position i + 1 (the "
        "mask hides keys from i + 2 on, triu(diagonal=2)). Hide every key "
        "after the query, j > i: triu(diagonal=1), or keep tril()"
    ),
    "mask-with-zero": (
        "your output matches the future's scores set to 0 (a multiply by "
        "the lower-triangular mask, or masked_fill with 0): exp(0) = 1, so "
        "future positions still get weight. Fill them with float('-inf') "
        "before the softmax, so their weight is exactly 0"
    ),
    "scale-by-time": (
        "your output matches scores divided by sqrt of the sequence length "
        "(q.shape[-2], the time axis of (b, n_head, t, head_size)): the "
        "scale is 1 / sqrt(head_size), the size of the LAST axis, the one "
        "the dot product sums over"
    ),
    "masked-diagonal": (
        "your mask also hides the diagonal (j = i): a position may attend to "
        "itself, and position 0 then has no key left, 0/0 = NaN. Mask only "
        "j > i, i.e. .triu(diagonal=1)"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("GQA: 12 query heads, 4 kv heads", False, nh=12, nkv=4),
        new_case("MQA: 8 query heads, 1 kv head", False, nh=8, nkv=1),
        new_case("MHA: 4 and 4", False, nh=4, nkv=4),
    ]
    for i in range(2):
        nkv = rng.choice([2, 3, 4])
        cases.append(
            new_case(f"hidden {i + 1}", True, nh=nkv * rng.choice([2, 3, 4]), nkv=nkv)
        )
    return size_cases(
        cases,
        rng,
        {"b": 2, "t": 5, "hs": 8},
        lambda: {
            "b": rng.randint(1, 2),
            "t": rng.randint(4, 9),
            "hs": rng.choice([8, 16]),
        },
    )


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    b, t, hs = case["b"], case["t"], case["hs"]
    return tuple(
        normal(
            case["seed"],
            (b, case["nh"], t, hs),
            (b, case["nkv"], t, hs),
            (b, case["nkv"], t, hs),
        )
    )


def attend(q, k, v, *, repeat="interleave", mask=True, scale="d_k") -> torch.Tensor:
    """Each query head's group of keys and values, then causal attention
    (`scale` as heads.attend takes it)."""
    rep = q.shape[1] // k.shape[1]
    if repeat == "interleave":
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    else:
        k, v = k.repeat(1, rep, 1, 1), v.repeat(1, rep, 1, 1)
    return heads.attend(
        q,
        k,
        v,
        scale=scale,
        mask="causal" if mask else None,
    ).float()


def _by_hand(
    q, k, v, *, first_hidden: int = 1, fill: float = float("-inf"), divisor=None
) -> torch.Tensor:
    """Causal attention written out, with one of its usual slips: a mask off
    by one (it hides keys from i + first_hidden on; right: 1, so 0 hides the
    diagonal too, NaN at position 0, and 2 lets each position see the next
    one), the future filled with `fill` instead of -inf, or the scores
    divided by `divisor` instead of sqrt(head_size)."""
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    scores = q @ k.transpose(-2, -1) / (divisor or q.shape[-1] ** 0.5)
    t = q.shape[2]
    hidden = torch.ones(t, t, dtype=torch.bool).triu(diagonal=first_hidden)
    return scores.masked_fill(hidden, fill).softmax(-1) @ v


def _scaled_by_time(q, k, v) -> torch.Tensor:
    """Scores divided by sqrt(t), the size of axis -2, instead of axis -1's:
    the answer itself where t == head_size, so it does not apply there."""
    t, hs = q.shape[-2:]
    if t == hs:
        raise ValueError("sqrt(t) is sqrt(head_size) here")
    return _by_hand(q, k, v, divisor=t**0.5)


run_case = calls(inputs)


def _variants(q, k, v) -> list[Variant]:
    return [
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
            lambda: attend(q, k, v, scale="none"),
            MESSAGES["missing-scale"],
        ),
        Variant(
            "scale-by-d-k",
            lambda: attend(q, k, v, scale="d_k_full"),
            MESSAGES["scale-by-d-k"],
        ),
        Variant(
            "masked-diagonal",
            lambda: _by_hand(q, k, v, first_hidden=0),
            MESSAGES["masked-diagonal"],
        ),
        Variant(
            "mask-sees-next-key",
            lambda: _by_hand(q, k, v, first_hidden=2),
            MESSAGES["mask-sees-next-key"],
        ),
        Variant(
            "mask-with-zero",
            lambda: _by_hand(q, k, v, fill=0.0),
            MESSAGES["mask-with-zero"],
        ),
        Variant(
            "scale-by-time",
            lambda: _scaled_by_time(q, k, v),
            MESSAGES["scale-by-time"],
        ),
    ]


def _sizes(case: dict, expected: torch.Tensor) -> dict:
    """k and v's head count, so a shape that took it is named."""
    return {"n_kv_head": case["nkv"]}


check_case = tensor_compared(
    inputs,
    reference="attend",
    errors=ERRORS,
    sizes=_sizes,
    nan_agrees=True,  # the masked diagonal's NaN rows are its match
    axes=("batch", "n_head", "time", "head_size"),
    what="the attention output",
)
