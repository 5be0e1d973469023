"""scaled-dot-product: softmax(q k^T / sqrt(d_k)) v on already-split heads.

Cases use more queries than keys or fewer (t_q != t_k) and a value width
that differs from the key width (d_v != d_k), so a transpose on the wrong
axis, a softmax over the query axis or a scale by sqrt(d_v) cannot hide
behind a square shape.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.checks.heads import attend
from grading_engine.exercises.kit.cases import normal
from grading_engine.exercises.kit.runs import calls

SLUG = "scaled-dot-product"
ENTRY_POINT = "scaled_dot_product"
SIGNATURE = "scaled_dot_product(q, k, v) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

ERRORS = [
    (
        "cannot be multiplied",
        "keys-not-transposed",
        "q is (..., t_q, d_k) and k is (..., t_k, d_k): the scores are "
        "q @ k.transpose(-2, -1), (..., t_q, t_k); transpose the last two "
        "axes of k, not the first two",
    ),
    (
        "dimensions of batch2 tensor",
        "keys-not-transposed",
        "q @ k needs k's last two axes swapped: use k.transpose(-2, -1)",
    ),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "(2, 3, t_q=4, d_k=8) x (t_k=6, d_v=5)",
            "hidden": False,
            "lead": [2, 3],
            "tq": 4,
            "tk": 6,
            "dk": 8,
            "dv": 5,
            "seed": 1,
        },
        {
            "name": "GPT-2 head shape (1, 12, 7, 64)",
            "hidden": False,
            "lead": [1, 12],
            "tq": 7,
            "tk": 7,
            "dk": 64,
            "dv": 64,
            "seed": 2,
        },
    ]
    for i in range(3):
        tq = rng.randint(2, 9)
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "lead": [rng.randint(1, 3), rng.randint(2, 5)],
                "tq": tq,
                "tk": tq + rng.randint(1, 6),
                "dk": rng.choice([16, 32, 48]),
                "dv": rng.choice([20, 24, 40]),  # never equal to t_k
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    lead, tq, tk = case["lead"], case["tq"], case["tk"]
    return tuple(
        normal(
            case["seed"],
            (*lead, tq, case["dk"]),
            (*lead, tk, case["dk"]),
            (*lead, tk, case["dv"]),
        )
    )


run_case = calls(inputs)


WEIGHTS_NOT_APPLIED = (
    "returned-weights",
    "that is the (t_q, t_k) matrix of attention weights: finish by "
    "multiplying it with v, (..., t_k, d_v)",
)


def _variants(q, k, v) -> list[Variant]:
    return [
        Variant(
            "missing-scale",
            lambda: attend(q, k, v, scale="none"),
            "your output matches softmax(q @ k^T) @ v with no scale: divide "
            "the scores by sqrt(d_k) before the softmax, or wide heads give "
            "near one-hot weights",
        ),
        Variant(
            "scale-by-d-v",
            lambda: attend(q, k, v, scale="d_v"),
            "your output matches scores divided by sqrt(d_v): the scale "
            "comes from the dot product, which sums over d_k = q.shape[-1] "
            "terms, not from the width of v",
        ),
        Variant(
            "scale-by-d-k",
            lambda: attend(q, k, v, scale="d_k_full"),
            "your output matches scores divided by d_k itself: the scale is "
            "1 / sqrt(d_k). A dot product of d_k unit-variance terms has "
            "variance d_k, so dividing by its square root (the standard "
            "deviation) brings it back to 1; dividing by d_k shrinks the "
            "scores and flattens the softmax",
        ),
        *(
            Variant(
                "scale-by-time",
                lambda n=n: attend(q.double() / n**0.5, k, v, scale="none"),
                f"your output matches scores divided by sqrt({axis}), the "
                f"number of {what} (axis -2): the scale is 1 / sqrt(d_k), the "
                "size of the LAST axis of q and k, the one the dot product "
                "sums over",
            )
            for n, axis, what in (
                (k.shape[-2], "t_k", "keys"),
                (q.shape[-2], "t_q", "queries"),
            )
        ),
        Variant(
            "scale-multiplied",
            lambda: attend(q, k, v, scale="times_sqrt_d_k"),
            "your output matches scores MULTIPLIED by sqrt(d_k): divide by it. "
            "The dot product already grows like sqrt(d_k); multiplying makes "
            "the scores larger still and saturates the softmax",
        ),
        Variant(
            "scale-after-softmax",
            lambda: attend(q, k, v, scale="none") / q.shape[-1] ** 0.5,
            "your output matches softmax(q @ k^T) @ v divided by sqrt(d_k) "
            "afterwards: the scale belongs to the SCORES, before the softmax, "
            "where it keeps the weights from saturating; after it, it only "
            "shrinks the output and the weights no longer sum to 1 in effect",
        ),
        Variant(
            "unwanted-causal-mask",
            lambda: attend(q, k, v, mask="square"),
            "your output matches attention with a causal mask (query i sees "
            "keys 0..i only): this exercise has no mask, every query sees "
            "every key, as in cross-attention or an encoder",
        ),
        Variant(
            "unwanted-causal-mask",
            lambda: attend(q, k, v, mask="causal"),
            "your output matches attention with a causal mask (the queries "
            "as the last t_q of t_k positions): this exercise has no mask, "
            "every query sees every key, as in cross-attention or an encoder",
        ),
        Variant(
            "softmax-wrong-axis",
            lambda: attend(q, k, v, softmax_dim=-2),
            "your output matches a softmax over the query axis (dim=-2): "
            "each query's weights over the keys must sum to 1, so "
            "normalise over the last axis, softmax(dim=-1)",
        ),
    ]


def _sizes(case: dict, _expected) -> dict:
    """The sizes a wrong shape's axes are named by; t_k and d_k are not in
    the output's shape, so they come from the case."""
    return {"t_k": case["tk"], "d_k": case["dk"], "n_head": case["lead"][1]}


check_case = tensor_compared(
    inputs,
    reference="attend",
    as_float=True,
    errors=ERRORS,
    axes=("batch", "n_head", "t_q", "d_v"),
    sizes=_sizes,
    shape_hints={
        "replaced:d_v->t_k": WEIGHTS_NOT_APPLIED,
        "replaced:d_v->t_q": WEIGHTS_NOT_APPLIED,
        "size:d_v": (
            "returned-weights",
            "the last axis should be v's width d_v: multiply the weights "
            "(..., t_q, t_k) by v (..., t_k, d_v)",
        ),
    },
    what="the attention output",
)
