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
from grading_engine.checks.fingerprints import Variant, computed
from grading_engine.checks.judges import tensor_check
from grading_engine.exercises.kit.cases import new_case, normal, size_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

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


def attend(q, k, v, *, repeat="interleave", mask=True, scale=True) -> torch.Tensor:
    """Each query head's group of keys and values, then causal attention."""
    rep = q.shape[1] // k.shape[1]
    if repeat == "interleave":
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    else:
        k, v = k.repeat(1, rep, 1, 1), v.repeat(1, rep, 1, 1)
    return heads.attend(
        q,
        k,
        v,
        scale="d_k" if scale else "none",
        mask="causal" if mask else None,
    ).float()


def _masked_diagonal(q, k, v) -> torch.Tensor:
    """Causal attention whose mask hides the diagonal too (NaN at position 0)."""
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    t = q.shape[2]
    hidden = torch.ones(t, t, dtype=torch.bool).triu()
    return scores.masked_fill(hidden, float("-inf")).softmax(-1) @ v


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
            lambda: attend(q, k, v, scale=False),
            MESSAGES["missing-scale"],
        ),
        Variant(
            "masked-diagonal",
            lambda: _masked_diagonal(q, k, v),
            MESSAGES["masked-diagonal"],
        ),
    ]


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    q, k, v = inputs(case)
    return attend(q, k, v)


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    q, k, v = inputs(case)
    return computed(_variants(q, k, v))


def _sizes(case: dict, expected: torch.Tensor) -> dict:
    """k and v's head count, so a shape that took it is named."""
    return {"n_kv_head": case["nkv"]}


check_case = tensor_check(
    expected_output,
    known_mistakes,
    errors=ERRORS,
    sizes=_sizes,
    nan_agrees=True,  # the masked diagonal's NaN rows are its match
    axes=("batch", "n_head", "time", "head_size"),
    what="the attention output",
)
