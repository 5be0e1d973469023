"""mlp-forward: GPT-2's position-wise MLP from raw weights.

c_fc expands each position from n_embd to 4 * n_embd, GELU (tanh
approximation) acts on every hidden unit, c_proj projects back. Weights come
in nn.Linear orientation (out, in). The visible GPT-2 case uses block 0 of
the reference with non-zero biases, so a dropped bias shows; the inputs are
scaled so pre-activations reach the range where the exact and the tanh GELU
differ by more than the tolerance.
"""

from __future__ import annotations

import math
import random

import torch
from torch.nn import functional as F

from grading_engine.checks.fingerprints import Variant, computed
from grading_engine.checks.judges import tensor_check
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation
from grading_engine.reference.cache import reference_model

SLUG = "mlp-forward"
ENTRY_POINT = "mlp_forward"
SIGNATURE = (
    "mlp_forward(x, c_fc_weight, c_fc_bias, c_proj_weight, c_proj_bias) -> Tensor"
)

RTOL, ATOL = 1e-4, 1e-5

ERRORS = [
    (
        "cannot be multiplied",
        "transposed-weight",
        "the weights are stored (out, in) like nn.Linear: c_fc_weight is "
        "(4 * n_embd, n_embd), so compute x @ c_fc_weight.T + c_fc_bias (or "
        "F.linear(x, c_fc_weight, c_fc_bias))",
    ),
]


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "d=16", "hidden": False, "d": 16, "b": 2, "t": 5, "seed": 1},
        {
            "name": "gpt2 block 0",
            "hidden": False,
            "gpt2": True,
            "b": 1,
            "t": 4,
            "seed": 2,
        },
    ]
    for i in range(3):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "d": rng.choice([8, 12, 20, 24, 40]),
                "b": rng.randint(1, 3),
                "t": rng.randint(3, 9),
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, ...]:
    """(x, c_fc_weight, c_fc_bias, c_proj_weight, c_proj_bias): a tuple, so
    `calls` passes them as five arguments."""
    g = torch.Generator().manual_seed(case["seed"])
    if case.get("gpt2"):
        mlp = reference_model("gpt2").transformer.h[0].mlp
        d = 768
        w_fc = mlp.c_fc.weight.detach()
        w_proj = mlp.c_proj.weight.detach()
        # GPT-2's init has zero biases; fill them so a forgotten bias shows.
        b_fc = torch.randn(4 * d, generator=g) * 0.5
        b_proj = torch.randn(d, generator=g) * 0.1
        # LayerNorm output has unit scale; x2 puts c_fc's outputs near +-2,
        # where the two GELUs part.
        x = 2 * torch.randn(case["b"], case["t"], d, generator=g) / (0.02 * d**0.5)
        return x, w_fc, b_fc, w_proj, b_proj
    d = case["d"]
    return (
        2 * torch.randn(case["b"], case["t"], d, generator=g),
        torch.randn(4 * d, d, generator=g) / d**0.5,
        torch.randn(4 * d, generator=g) * 0.5,
        torch.randn(d, 4 * d, generator=g) / (4 * d) ** 0.5,
        torch.randn(d, generator=g) * 0.1,
    )


def mlp(
    x, w_fc, b_fc, w_proj, b_proj, act="tanh", biases=("fc", "proj"), cubic=0.044715
):
    """The MLP, or a known mistake of it (`cubic`: the coefficient a GELU
    written out by hand, act="formula", uses)."""
    h = F.linear(x, w_fc, b_fc if "fc" in biases else None)
    if act == "tanh":
        h = F.gelu(h, approximate="tanh")
    elif act == "exact":
        h = F.gelu(h)
    elif act == "relu":
        h = F.relu(h)
    elif act == "silu":
        h = F.silu(h)
    elif act == "twice":
        h = F.gelu(F.gelu(h, approximate="tanh"), approximate="tanh")
    elif act == "sigmoid":
        h = h * torch.sigmoid(1.702 * h)
    elif act == "formula":
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + cubic * h**3)))
    return F.linear(h, w_proj, b_proj if "proj" in biases else None)


run_case = calls(inputs)


def _bias_after_gelu(x, w_fc, b_fc, w_proj, b_proj):
    h = F.gelu(F.linear(x, w_fc), approximate="tanh") + b_fc
    return F.linear(h, w_proj, b_proj)


def _variants(args: tuple[torch.Tensor, ...]) -> list[Variant]:
    variants = [
        Variant("exact-gelu", lambda: mlp(*args, act="exact")),
        Variant("relu-activation", lambda: mlp(*args, act="relu")),
        Variant("silu-activation", lambda: mlp(*args, act="silu")),
        Variant("gelu-twice", lambda: mlp(*args, act="twice")),
        Variant(
            "missing-activation",
            lambda: mlp(*args, act="none"),
            "your output matches the MLP with no activation between c_fc "
            "and c_proj: two Linears in a row are one Linear (rank at most "
            "n_embd), so the expansion buys nothing; apply "
            "F.gelu(h, approximate='tanh') to the hidden layer",
        ),
    ]
    variants += [
        Variant(
            "sigmoid-approximation",
            lambda: mlp(*args, act="sigmoid"),
            "your output matches the MLP with GELU's sigmoid approximation, "
            "h * sigmoid(1.702 * h): GPT-2 was trained with the tanh one, "
            "F.gelu(h, approximate='tanh'), and its weights expect it",
        ),
        *(
            Variant(
                "gelu-coefficient-mistyped",
                lambda typo=typo: mlp(*args, act="formula", cubic=typo),
                f"your output matches a tanh GELU with the cubic coefficient "
                f"typed as {typo}: it is 0.044715 (check the number of zeros), "
                "or use F.gelu(h, approximate='tanh')",
            )
            for typo in (0.44715, 0.0044715)
        ),
        Variant(
            "gelu-after-c-proj",
            lambda: F.gelu(mlp(*args), approximate="tanh"),
            "your output matches GELU applied to c_proj's output as well: the "
            "MLP has one activation, on the 4 * n_embd hidden layer between "
            "c_fc and c_proj; return c_proj's output as it is (the block adds "
            "it to the residual stream, where negative values matter)",
        ),
        Variant(
            "added-residual",
            lambda: args[0] + mlp(*args),
            "your output matches x + mlp(x): the residual add belongs to the "
            "block (x = x + mlp(ln_2(x))); mlp_forward returns the MLP's own "
            "output, which the block then adds",
        ),
        Variant(
            "bias-after-activation",
            lambda: _bias_after_gelu(*args),
            "your output matches c_fc's bias added after the GELU: c_fc is "
            "one affine map, x @ W.T + b, and the activation acts on its "
            "whole output, gelu(x @ W.T + b)",
        ),
    ]
    for kept, missing in [
        ((), "c_fc and c_proj"),
        (("proj",), "c_fc"),
        (("fc",), "c_proj"),
    ]:
        variants.append(
            Variant(
                "missing-bias",
                lambda kept=kept: mlp(*args, biases=kept),
                f"your output matches the MLP without the bias of {missing}: "
                "both Linears are affine, x @ W.T + b",
            )
        )
    return variants


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    with torch.no_grad():
        return mlp(*inputs(case))


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    return computed(_variants(inputs(case)))


def _sizes(case: dict, expected: torch.Tensor) -> dict:
    """The hidden layer's width, so an output of that width is named."""
    return {"4*n_embd": 4 * expected.shape[-1]}


check_case = tensor_check(
    expected_output,
    known_mistakes,
    errors=ERRORS,
    sizes=_sizes,
    axes=("batch", "time", "n_embd"),
    shape_hints={
        "replaced:n_embd->4*n_embd": (
            "missing-output-projection",
            "that is the hidden layer: finish with c_proj, which brings "
            "4 * n_embd back to n_embd",
        ),
    },
    what="the MLP output",
)
