"""causal-self-attention: multi-head causal attention from raw weights.

Besides comparing values, the child calls the learner's function a second
time with the future positions of x replaced: a causal layer must give the
same outputs for the earlier positions. The parent compares the two outputs
it captured, so the mask is tested as a property, not only by value.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.fingerprints import (
    ATTENTION_FLAWS,
    Variant,
    attention,
    causal_property,
    computed,
)
from grading_engine.checks.judges import tensor_check
from grading_engine.checks.learner_calls import run_with_future
from grading_engine.expected import expectation
from grading_engine.reference import CausalSelfAttention, GPTConfig
from grading_engine.reference.cache import reference_model

SLUG = "causal-self-attention"
ENTRY_POINT = "causal_self_attention"
SIGNATURE = (
    "causal_self_attention(x, c_attn_weight, c_attn_bias, c_proj_weight, "
    "c_proj_bias, n_head) -> Tensor"
)

RTOL, ATOL = 1e-4, 1e-5
CAUSAL_WORDS = ("positions of x", "outputs")  # what changes, what must not

ERRORS = [
    (
        "cannot be multiplied",
        "transposed-weight",
        "the weights are in nn.Linear orientation (out, in): c_attn_weight is "
        "(3 * n_embd, n_embd), so compute x @ c_attn_weight.T + c_attn_bias "
        "(or F.linear(x, c_attn_weight, c_attn_bias))",
    ),
    (
        "view size is not compatible",
        "view-after-transpose",
        "after a transpose the tensor is not contiguous: call .contiguous() "
        "before .view, or use .reshape",
    ),
    (
        "is invalid for input of size",
        "head-split",
        "split the channels as .view(b, t, n_head, n_embd // n_head) and "
        "then .transpose(1, 2) to get (b, n_head, t, head_size)",
    ),
]


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "d=16, 2 heads",
            "hidden": False,
            "d": 16,
            "nh": 2,
            "b": 3,
            "t": 5,
            "seed": 1,
        },
        {
            "name": "gpt2 block 0",
            "hidden": False,
            "gpt2": True,
            "b": 1,
            "t": 6,
            "seed": 2,
        },
    ]
    for i in range(3):
        nh = rng.choice([3, 4, 6])
        hs = rng.choice([4, 8])
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "d": nh * hs,
                "nh": nh,
                "b": rng.randint(2, 3),
                "t": rng.randint(5, 11),
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def inputs(case: dict) -> tuple[list, torch.Tensor]:
    """([x, c_attn_weight, c_attn_bias, c_proj_weight, c_proj_bias, n_head],
    x with its future positions replaced)."""
    g = torch.Generator().manual_seed(case["seed"])
    if case.get("gpt2"):
        attn = reference_model("gpt2").transformer.h[0].attn
        weights = [
            p.detach()
            for p in (
                attn.c_attn.weight,
                attn.c_attn.bias,
                attn.c_proj.weight,
                attn.c_proj.bias,
            )
        ]
        # GPT-2's init has zero biases; fill them for this copy so a
        # forgotten bias shows.
        weights[1] = torch.randn(weights[1].shape, generator=g) * 0.1
        weights[3] = torch.randn(weights[3].shape, generator=g) * 0.1
        d, nh = 768, 12
    else:
        d, nh = case["d"], case["nh"]
        weights = [
            torch.randn(3 * d, d, generator=g) / d**0.5,
            torch.randn(3 * d, generator=g) * 0.1,
            torch.randn(d, d, generator=g) / d**0.5,
            torch.randn(d, generator=g) * 0.1,
        ]
    b, t = case["b"], case["t"]
    x = torch.randn(b, t, d, generator=g)
    future = x.clone()
    future[:, t // 2 :] = torch.randn(b, t - t // 2, d, generator=g)
    return [x, *weights, nh], future


def reference(args: list) -> torch.Tensor:
    x, w_attn, b_attn, w_proj, b_proj, n_head = args
    module = CausalSelfAttention(GPTConfig(n_embd=x.shape[-1], n_head=n_head))
    module.load_state_dict(
        {
            "c_attn.weight": w_attn,
            "c_attn.bias": b_attn,
            "c_proj.weight": w_proj,
            "c_proj.bias": b_proj,
        }
    )
    with torch.no_grad():
        return module(x)


def run_case(fn, case: dict):
    args, future = inputs(case)
    return run_with_future(fn, args, (future, *args[1:]))


@expectation
def expected_output(case: dict) -> dict:
    """The right output and the head count (shipped for the visible cases)."""
    args, _ = inputs(case)
    return {"output": reference(args), "n_head": args[-1]}


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    args, _ = inputs(case)
    return computed(
        Variant(diagnosis, lambda f=flaws: attention(*args, flaws=f))
        for diagnosis, flaws in ATTENTION_FLAWS
    )


def _sizes(case: dict, shipped: dict) -> dict:
    """The head count and widths a wrong shape's axes are named by."""
    n_head, d = shipped["n_head"], shipped["output"].shape[-1]
    return {"n_head": n_head, "head_size": d // n_head, "3*n_embd": 3 * d}


_declared = tensor_check(
    expected_output,
    known_mistakes,
    errors=ERRORS,
    axes=("batch", "time", "n_embd"),
    sizes=_sizes,
    shape_hints={
        "replaced:n_embd->3*n_embd": (
            "missing-output-projection",
            "that is the qkv projection: split it into q, k, v, attend, "
            "and finish with c_proj",
        ),
    },
    what="the attention output",
)


def check_case(case: dict, data: dict, tensors: dict):
    """The declared chain, then the mask as a property: the second call's
    later inputs must leave the earlier outputs as they were."""
    results = _declared(case, data, tensors)
    got = tensors.get("output")
    if (
        data.get("error")
        or got is None
        or got.shape != expected_output(case)["output"].shape
    ):
        return results
    future = tensors.get("future")
    return results + [
        causal_property(
            case["name"],
            got,
            future,
            results,
            CAUSAL_WORDS,
            rtol=RTOL,
            atol=ATOL,
            hidden=bool(case["hidden"]),
        )
    ]
