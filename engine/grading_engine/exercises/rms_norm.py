"""rms-norm: RMSNorm over the last axis, written from its definition.

y = x / sqrt(mean(x²) + eps) · weight: no mean subtracted, no bias (lesson
rmsnorm-swiglu, Zhang and Sennrich, 2019; PyTorch's nn.RMSNorm). Every case
mixes rows with large offsets (where subtracting the mean, as LayerNorm
does, changes the output) and rows whose mean square is near eps (where eps
outside the square root does), so each slip moves the output by more than
the tolerance.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import new_case, size_cases
from grading_engine.exercises.kit.runs import calls

SLUG = "rms-norm"
ENTRY_POINT = "rms_norm"
SIGNATURE = "rms_norm(x, weight, eps) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

MESSAGES = {
    "layernorm-not-rmsnorm": (
        "your output matches (x - mean) / sqrt(var + eps) · weight: that is "
        "LayerNorm's centring. RMSNorm skips the mean: divide x itself by "
        "its root mean square, sqrt(mean(x²) + eps), so a constant offset "
        "is kept, not removed"
    ),
    "eps-outside-sqrt": (
        "your output matches x / (sqrt(mean(x²)) + eps): eps belongs inside "
        "the square root, x / sqrt(mean(x²) + eps); the two part for rows "
        "whose mean square is near eps"
    ),
    "rms-sum-not-mean": (
        "your output matches x / sqrt(sum(x²) + eps): the root MEAN square "
        "divides the sum by d (x.pow(2).mean(-1, keepdim=True)); with the "
        "sum, every output shrinks by sqrt(d)"
    ),
    "variance-not-mean-square": (
        "your output matches x / sqrt(var(x) + eps) · weight: the variance "
        "subtracts the mean before squaring, as LayerNorm does. RMSNorm "
        "divides by the plain mean square, sqrt(mean(x²) + eps), so rows "
        "with a constant offset keep their size"
    ),
    "missing-affine": (
        "your output matches the normalised x without its learned scale: "
        "finish with * weight (RMSNorm's only parameter, d numbers, no bias)"
    ),
    "missing-sqrt": (
        "your output matches x / (mean(x²) + eps) without the square root: "
        "RMSNorm divides by the ROOT mean square, "
        "x / sqrt(mean(x²) + eps) (or x * torch.rsqrt(...)), which has x's "
        "own units"
    ),
    "hard-coded-eps": (
        "your output matches a fixed eps = 1e-6 (LLaMA's default) where "
        "this case passes another: use the eps argument"
    ),
    "wrong-axis": (
        "your output matches the mean square taken over the time axis: "
        "RMSNorm normalises each position's own feature vector, the last "
        "axis (dim=-1, keepdim=True)"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("d=16, eps=1e-5", False, b=2, t=5, d=16, eps=1e-5),
        new_case("d=768, eps=1e-5", False, b=1, t=4, d=768, eps=1e-5),
        new_case("hidden eps=1e-3", True, eps=1e-3),
        new_case("hidden 1", True, eps=rng.choice([1e-5, 1e-6])),
        new_case("hidden 2", True, eps=rng.choice([1e-5, 1e-6])),
    ]

    def draw() -> dict:
        return {
            "b": rng.randint(1, 3),
            "t": rng.randint(4, 9),
            "d": rng.choice([8, 12, 24, 48, 64]),
        }

    return size_cases(cases, rng, {}, draw)


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, float]:
    """(x, weight, eps): rows of mixed scale and offset, every third tiny."""
    g = torch.Generator().manual_seed(case["seed"])
    b, t, d = case["b"], case["t"], case["d"]
    scale = torch.exp(torch.empty(b, t, 1).uniform_(-1.0, 1.5, generator=g))
    scale[:, ::3] = 1e-3  # mean square about 1e-6: near or below eps
    offset = (torch.rand(b, t, 1, generator=g) * 4.0 - 2.0) * scale
    x = torch.randn(b, t, d, generator=g) * scale + offset
    weight = 1.0 + 0.3 * torch.randn(d, generator=g)
    return x, weight, case["eps"]


def rms_norm_variant(x, weight, eps, kind: str = "right") -> torch.Tensor:
    """RMSNorm, or one of the usual slips of it, in float64."""
    x, weight = x.double(), weight.double()
    dim = -2 if kind == "time-axis" else -1
    if kind == "centred":
        x = x - x.mean(dim, keepdim=True)
    square = x.pow(2).sum(dim, keepdim=True) if kind == "sum" else None
    if kind.startswith("variance"):  # centred in the denominator only
        square = x.var(dim, unbiased=kind == "variance-unbiased", keepdim=True)
    if square is None:
        square = x.pow(2).mean(dim, keepdim=True)
    if kind == "eps-1e-6":
        eps = 1e-6
    if kind == "eps-outside":
        y = x / (square.sqrt() + eps)
    elif kind == "no-sqrt":
        y = x / (square + eps)
    else:
        y = x / torch.sqrt(square + eps)
    return y if kind == "no-affine" else y * weight


def reference(x, weight, eps) -> torch.Tensor:
    return rms_norm_variant(x, weight, eps).float()


def _variants(x, weight, eps) -> list[Variant]:
    kinds = [
        ("layernorm-not-rmsnorm", "centred"),
        ("eps-outside-sqrt", "eps-outside"),
        ("rms-sum-not-mean", "sum"),
        # x.var as written: torch's default divides by d - 1
        ("variance-not-mean-square", "variance"),
        ("variance-not-mean-square", "variance-unbiased"),
        ("missing-affine", "no-affine"),
        ("wrong-axis", "time-axis"),
        ("missing-sqrt", "no-sqrt"),
    ]
    if eps != 1e-6:
        kinds.append(("hard-coded-eps", "eps-1e-6"))
    return [
        Variant(d, lambda k=k: rms_norm_variant(x, weight, eps, k), MESSAGES[d])
        for d, k in kinds
    ]


run_case = calls(inputs)
check_case = tensor_compared(
    inputs,
    axes=("batch", "time", "n_embd"),
    what="the normalised output",
    dtype_hint="keep the input's dtype (float32)",
)
