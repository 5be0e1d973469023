"""layer-norm: LayerNorm over the last axis, written from its definition.

y = (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the
biased variance (divided by n) taken over the last axis of each position.
Every case mixes rows of very different scales and offsets, including rows
whose variance is below eps, so an eps in the wrong place, an eps ignored or
an unbiased variance each change the output by more than the tolerance.
One hidden case has fixed values in every draw: eps=1e-3, (1, 6, 24).
"""

from __future__ import annotations

import random

import torch
from torch.nn import functional as F

from grading_engine.checks.fingerprints import Variant, computed
from grading_engine.checks.judges import tensor_check
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

SLUG = "layer-norm"
ENTRY_POINT = "layer_norm"
SIGNATURE = "layer_norm(x, weight, bias, eps) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "d=16, eps=1e-5",
            "hidden": False,
            "b": 2,
            "t": 5,
            "d": 16,
            "eps": 1e-5,
            "seed": 1,
        },
        {
            "name": "d=768, eps=1e-5",
            "hidden": False,
            "b": 1,
            "t": 4,
            "d": 768,
            "eps": 1e-5,
            "seed": 2,
        },
        {
            "name": "hidden eps=1e-3",
            "hidden": True,
            "b": 2,
            "t": rng.randint(4, 8),
            "d": rng.choice([12, 24, 48]),
            "eps": 1e-3,
            "seed": rng.randrange(2**31),
        },
    ]
    for i in range(2):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "b": rng.randint(1, 3),
                "t": rng.randint(4, 9),
                "d": rng.choice([8, 20, 32, 64]),
                "eps": rng.choice([1e-5, 1e-6]),
                "seed": rng.randrange(2**31),
            }
        )
    # The same values in every draw: an eps other than 1e-5, so a
    # hard-coded 1e-5 is caught on every attempt, not by the draw's luck.
    cases.append(
        {
            "name": "hidden: eps=1e-3, d=24",
            "hidden": True,
            "b": 1,
            "t": 6,
            "d": 24,
            "eps": 1e-3,
            "seed": 1003,
        }
    )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """(x, weight, bias, eps): rows with mixed scales, one third of them tiny."""
    g = torch.Generator().manual_seed(case["seed"])
    b, t, d = case["b"], case["t"], case["d"]
    scale = torch.exp(torch.empty(b, t, 1).uniform_(-1.0, 1.5, generator=g))
    # Every third row tiny, its variance below eps (at most 1e-6, and under
    # eps / 4 even at the top of its spread): an eps ignored, used as a
    # floor or put outside the root then moves every such row, in every case.
    scale[:, ::3] = min(1e-3, (case["eps"] / 40) ** 0.5)
    offset = torch.randn(b, t, 1, generator=g) * 2.0 * scale.clamp(max=1.0)
    x = torch.randn(b, t, d, generator=g) * scale + offset
    weight = 1.0 + 0.3 * torch.randn(d, generator=g)
    bias = 0.2 * torch.randn(d, generator=g)
    return x, weight, bias, case["eps"]


def layer_norm_variant(x, weight, bias, eps, kind: str = "right"):
    """LayerNorm, or one of the usual slips of it, in float64."""
    x, weight, bias = x.double(), weight.double(), bias.double()
    dim = {"time-axis": -2, "time-and-features": (-2, -1)}.get(kind, -1)
    mean = x.mean(dim, keepdim=True)
    if kind == "rms":
        mean = torch.zeros_like(mean)
    var = ((x - mean) ** 2).mean(dim, keepdim=True)
    if kind == "unbiased":
        var = x.var(dim, keepdim=True, unbiased=True)
    if kind == "eps-outside":
        xhat = (x - mean) / (var.sqrt() + eps)
    elif kind in ("no-eps", "eps-1e-5"):
        xhat = (x - mean) / torch.sqrt(var + (0.0 if kind == "no-eps" else 1e-5))
    else:
        xhat = (x - mean) / torch.sqrt(var + eps)
    if kind == "no-affine":
        return xhat
    if kind == "swapped-affine":
        return xhat * bias + weight
    if kind == "shift-then-scale":
        return (xhat + bias) * weight
    return xhat * weight + bias


run_case = calls(inputs)


def _variants(x, weight, bias, eps) -> list[Variant]:
    def variant(kind):
        return lambda: layer_norm_variant(x, weight, bias, eps, kind)

    return [
        Variant("layernorm-unbiased-variance", variant("unbiased")),
        Variant(
            "eps-outside-sqrt",
            variant("eps-outside"),
            "your output matches (x - mean) / (std + eps): eps belongs "
            "inside the square root, (x - mean) / sqrt(var + eps); the two "
            "part for rows whose variance is near eps",
        ),
        Variant(
            "layernorm-eps",
            variant("no-eps"),
            "your output matches LayerNorm without eps: add eps to the "
            "variance inside the square root, or a constant row divides "
            "by zero",
        ),
        Variant(
            "layernorm-eps",
            variant("eps-1e-5"),
            f"your output matches eps=1e-5 where this case passes "
            f"eps={eps:g}: use the eps argument, not a constant",
        ),
        Variant(
            "wrong-axis",
            variant("time-axis"),
            "your output matches statistics taken over the time axis "
            "(dim=1): LayerNorm normalises each position's feature vector, "
            "the last axis (dim=-1, keepdim=True); over time, a position "
            "would see the future",
        ),
        Variant(
            "wrong-axis",
            variant("time-and-features"),
            "your output matches one mean and variance over the whole "
            "sequence (time and features together): LayerNorm takes them "
            "per position, over the last axis only (dim=-1, keepdim=True)",
        ),
        Variant(
            "swapped-affine",
            variant("swapped-affine"),
            "your output matches x_hat * bias + weight: weight (gamma) is "
            "the scale that multiplies x_hat and bias (beta) the shift "
            "added after it, y = x_hat * weight + bias",
        ),
        Variant(
            "affine-order",
            variant("shift-then-scale"),
            "your output matches (x_hat + bias) * weight: the shift comes "
            "after the scale, y = x_hat * weight + bias, so bias is not "
            "multiplied by weight",
        ),
        Variant(
            "rms-norm",
            variant("rms"),
            "your output matches RMSNorm, which skips the mean: LayerNorm "
            "subtracts each row's mean before dividing by its standard "
            "deviation",
        ),
        Variant(
            "missing-affine",
            variant("no-affine"),
            "your output matches the normalised x without weight and bias: "
            "finish with x_hat * weight + bias (gamma and beta)",
        ),
    ]


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    x, weight, bias, eps = inputs(case)
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    return computed(_variants(*inputs(case)))


check_case = tensor_check(
    expected_output,
    known_mistakes,
    axes=("batch", "time", "n_embd"),
    what="the normalised output",
    dtype_hint="keep the input's dtype (float32)",
)
