"""gelu-tanh: GPT-2's GELU, the tanh approximation, written from its formula.

0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))). The exact GELU
(erf) differs from it by up to 4.7e-4, which the tolerance catches; the cases
sweep the range where the approximations part, and one case reaches |x| = 40,
where a tanh rebuilt from exp() overflows to NaN.
"""

from __future__ import annotations

import math
import random

import torch
from torch.nn import functional as F

from grading_engine.checks.answers import tensor_answer
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

SLUG = "gelu-tanh"
ENTRY_POINT = "gelu_tanh"
SIGNATURE = "gelu_tanh(x) -> Tensor"

RTOL, ATOL = 1e-5, 1e-6
_C = math.sqrt(2.0 / math.pi)
TANH_OVERFLOW = (
    "tanh-overflow",
    "for large |x| the tanh argument is in the hundreds, and a tanh "
    "rebuilt from exp() computes inf / inf; use torch.tanh, which "
    "saturates to +-1",
)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "sweep -6..6",
            "hidden": False,
            "kind": "sweep",
            "lo": -6.0,
            "hi": 6.0,
            "n": 241,
        },
        {
            "name": "random (4, 7)",
            "hidden": False,
            "kind": "randn",
            "shape": [4, 7],
            "scale": 2.0,
            "seed": 1,
        },
        {
            "name": "hidden large inputs",
            "hidden": True,
            "kind": "sweep",
            "lo": -40.0,
            "hi": 40.0,
            "n": 161,
        },
    ]
    for i in range(2):
        cases.append(
            {
                "name": f"hidden random {i + 1}",
                "hidden": True,
                "kind": "randn",
                "shape": [rng.randint(2, 4), rng.randint(3, 9), rng.randint(5, 17)],
                "scale": rng.choice([1.5, 2.5, 3.0]),
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def inputs(case: dict) -> torch.Tensor:
    if case["kind"] == "sweep":
        return torch.linspace(case["lo"], case["hi"], case["n"])
    g = torch.Generator().manual_seed(case["seed"])
    return case["scale"] * torch.randn(*case["shape"], generator=g)


def gelu_variant(x: torch.Tensor, kind: str) -> torch.Tensor:
    """The right GELU or one of the usual slips, computed in float64."""
    x = x.double()
    if kind == "exact":
        return F.gelu(x)
    if kind == "relu":
        return F.relu(x)
    if kind == "sigmoid":
        return x * torch.sigmoid(1.702 * x)
    if kind == "silu":
        return F.silu(x)
    if kind == "twice":
        return F.gelu(F.gelu(x, approximate="tanh"), approximate="tanh")
    c, k, half = _C, 0.044715, 0.5
    if kind == "no-x":
        return half * (1.0 + torch.tanh(c * (x + k * x**3)))
    if kind == "parentheses":
        return half * x * (1.0 + torch.tanh(c * x + k * x**3))
    if kind == "square":
        return half * x * (1.0 + torch.tanh(c * (x + k * x**2)))
    if kind == "no-cube":
        k = 0.0
    elif kind == "pi-over-2":
        c = math.sqrt(math.pi / 2.0)
    elif kind == "no-sqrt":
        c = 2.0 / math.pi
    elif kind == "two-times-pi":
        c = math.sqrt(2.0 * math.pi)
    elif kind == "no-half":
        half = 1.0
    elif kind == "coefficient-x10":  # 0.44715: a zero dropped
        k *= 10
    elif kind == "coefficient-div10":  # 0.0044715: a zero added
        k /= 10
    return half * x * (1.0 + torch.tanh(c * (x + k * x**3)))


run_case = calls(inputs)


def _variants(x: torch.Tensor) -> list[Variant]:
    def variant(kind):
        return lambda: gelu_variant(x, kind)

    return [
        Variant("exact-gelu", variant("exact")),
        Variant("relu-activation", variant("relu")),
        Variant(
            "sigmoid-approximation",
            variant("sigmoid"),
            "your output matches x * sigmoid(1.702 x), the other "
            "approximation in Hendrycks and Gimpel (2016); GPT-2 used "
            "the tanh one, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
        ),
        Variant(
            "silu-activation",
            variant("silu"),
            "your output matches SiLU (swish), x * sigmoid(x), the activation "
            "of LLaMA-style models: GPT-2's MLP uses GELU, here its tanh "
            "approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))",
        ),
        Variant(
            "gelu-twice",
            variant("twice"),
            "your output matches GELU applied twice, gelu(gelu(x)): apply the "
            "formula once (a helper that already calls F.gelu or torch's GELU, "
            "fed its own output)",
        ),
        Variant(
            "missing-cubic-term",
            variant("no-cube"),
            "your output matches the formula without its cubic term: the "
            "tanh argument is sqrt(2/pi) * (x + 0.044715 * x**3)",
        ),
        Variant(
            "missing-cubic-term",
            variant("square"),
            "your output matches 0.044715 * x**2 in the tanh argument: the "
            "correction term is cubic, sqrt(2/pi) * (x + 0.044715 * x**3), "
            "and odd like x itself (x**2 bends negative inputs the wrong way)",
        ),
        Variant(
            "gelu-missing-x",
            variant("no-x"),
            "your output matches 0.5 * (1 + tanh(...)) without the leading x: "
            "that is the smooth step Phi(x), the probability; GELU is x times "
            "it, 0.5 * x * (1 + tanh(...))",
        ),
        Variant(
            "gelu-parentheses",
            variant("parentheses"),
            "your output matches sqrt(2/pi) * x + 0.044715 * x**3 inside the "
            "tanh: the constant multiplies the whole sum, "
            "sqrt(2/pi) * (x + 0.044715 * x**3)",
        ),
        Variant(
            "wrong-constant",
            variant("pi-over-2"),
            "your output matches sqrt(pi/2) in place of sqrt(2/pi): the "
            "constant is sqrt(2 / math.pi), about 0.7979",
        ),
        Variant(
            "wrong-constant",
            variant("no-sqrt"),
            "your output matches 2/pi without the square root: the "
            "constant is math.sqrt(2 / math.pi), about 0.7979",
        ),
        Variant(
            "wrong-constant",
            variant("two-times-pi"),
            "your output matches sqrt(2 * pi), about 2.507, in place of "
            "sqrt(2 / pi): the constant divides 2 by pi, "
            "math.sqrt(2 / math.pi), about 0.7979",
        ),
        *(
            Variant(
                "gelu-coefficient-mistyped",
                variant(f"coefficient-{typo}"),
                f"your output matches the cubic coefficient typed as {value}: "
                "the tanh approximation uses 0.044715 (x + 0.044715 * x**3); "
                "check the number of zeros",
            )
            for typo, value in (("x10", "0.44715"), ("div10", "0.0044715"))
        ),
        Variant(
            "missing-half",
            variant("no-half"),
            "your output is twice GELU: (1 + tanh(...)) runs from 0 to 2, "
            "so the formula needs its leading 0.5",
        ),
    ]


@expectation
def expected_output(case: dict) -> torch.Tensor:
    """The right output (shipped for the visible cases)."""
    return F.gelu(inputs(case), approximate="tanh")


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    return computed(_variants(inputs(case)))


def check_case(case: dict, data: dict, tensors: dict):
    if raised := case_error(case, data):
        return raised
    x = inputs(case)
    return tensor_answer(
        case["name"],
        data,
        tensors,
        expected_output(case),
        variants=lambda: shipped_variants(known_mistakes(case)),
        axes=tuple(f"axis {i}" for i in range(x.dim())),
        rtol=RTOL,
        atol=ATOL,
        what="GELU",
        finite_hint=TANH_OVERFLOW,
        dtype_hint="keep the input's dtype (float32)",
        hidden=bool(case["hidden"]),
    )
