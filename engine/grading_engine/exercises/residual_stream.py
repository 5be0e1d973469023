"""residual-stream: run the residual stream through a list of pre-norm sub-layers.

The stream x (b, t, d) enters every sub-layer through its norm and the
sub-layer's output is added back: x = x + f(norm(x)), in order, so each
sub-layer reads the sum of the embedding and everything written before it
(lesson residual-stream). The sub-layers widen inside (3d and 4d hidden
widths, like c_attn and c_fc) and project back to d. Inputs carry a large
offset and scale, so skipping the norm, normalising after the add, adding
to the normalised stream, dropping the add or feeding every sub-layer the
embedding each give other numbers.
"""

from __future__ import annotations

import random

import torch
from torch import nn

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import new_case, size_cases
from grading_engine.exercises.kit.runs import calls

SLUG = "residual-stream"
ENTRY_POINT = "residual_stream"
SIGNATURE = "residual_stream(x, sublayers) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

MESSAGES = {
    "reads-only-the-embedding": (
        "your output matches every sub-layer reading the embedding you were "
        "given, x + f1(n1(x0)) + f2(n2(x0)) + ...: the stream is updated "
        "between sub-layers, so sub-layer k reads the embedding PLUS every "
        "earlier sub-layer's output. Assign x = x + f(norm(x)) and feed the "
        "new x to the next one"
    ),
    "post-norm": (
        "your output matches x = norm(x + f(x)), the post-norm order of the "
        "original Transformer: a pre-norm stream normalises only what each "
        "sub-layer reads, x = x + f(norm(x)), and never the stream itself"
    ),
    "skipped-sublayer-norm": (
        "your output matches x = x + f(x), without the sub-layer's norm: in a "
        "pre-norm stream each sub-layer reads norm(x) (ln_1, ln_2), while "
        "the stream itself, un-normalised, is what gets added to"
    ),
    "skipped-last-sublayer": (
        "your output matches the stream after every sub-layer but the LAST: "
        "loop over all of them (for norm, f in sublayers), not "
        "range(len(sublayers) - 1)"
    ),
    "skipped-first-sublayer": (
        "your output matches the stream after every sub-layer but the FIRST "
        "(block 0's attention): the loop starts one late. Index from 0, "
        "range(len(sublayers)), or iterate over the pairs themselves"
    ),
    "sublayer-order": (
        "your output matches the sub-layers run in reverse: the list is in "
        "order (block 0's attention first), and each sub-layer reads what "
        "the earlier ones wrote"
    ),
    "added-to-normalised": (
        "your output matches x = norm(x) + f(norm(x)): the sub-layer's output "
        "is added to the NORMALISED stream, so every norm replaces the stream "
        "and whatever it carried is lost. The norm only feeds the sub-layer; "
        "add its output to the un-normalised x"
    ),
    "norm-on-branch": (
        "your output matches x + norm(f(x)): each pair is (norm, f), in "
        "that order; unpack it as `for norm, f in sublayers` so the norm "
        "runs first, x = x + f(norm(x))"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("one block (attention-like, MLP-like), d=8", False,
                 b=1, t=4, d=8, n_sub=2, offset=3.0),
        new_case("three blocks, d=16, a batch of 2", False,
                 b=2, t=5, d=16, n_sub=6, offset=5.0),
        *(new_case(f"hidden {i + 1}", True) for i in range(3)),
    ]  # fmt: skip

    def draw() -> dict:
        return {
            "b": rng.randint(1, 3),
            "t": rng.randint(2, 7),
            "d": rng.choice([4, 8, 12, 20]),
            "n_sub": 2 * rng.randint(1, 4),
            "offset": rng.choice([2.0, 4.0, 8.0]),
        }

    return size_cases(cases, rng, {}, draw)


def sublayers(case: dict) -> list[tuple[nn.Module, nn.Module]]:
    """(norm, f) pairs: a LayerNorm with random affine, then a 3d- or 4d-wide
    GELU MLP back to d, alternating like attention and MLP."""
    g = torch.Generator().manual_seed(case["seed"] + 1)
    d = case["d"]
    pairs = []
    with torch.no_grad():
        for k in range(case["n_sub"]):
            hidden = (3 if k % 2 == 0 else 4) * d
            norm = nn.LayerNorm(d)
            norm.weight.copy_(1.0 + 0.3 * torch.randn(d, generator=g))
            norm.bias.copy_(0.3 * torch.randn(d, generator=g))
            up = nn.utils.skip_init(nn.Linear, d, hidden)
            down = nn.utils.skip_init(nn.Linear, hidden, d)
            for layer, fan_in in ((up, d), (down, hidden)):
                layer.weight.copy_(torch.randn(layer.weight.shape, generator=g))
                layer.weight.mul_(fan_in**-0.5)
                layer.bias.copy_(0.1 * torch.randn(layer.bias.shape, generator=g))
            f = nn.Sequential(up, nn.GELU(approximate="tanh"), down)
            pairs.append((norm.requires_grad_(False), f.requires_grad_(False)))
    return pairs


def inputs(case: dict) -> tuple[torch.Tensor, list]:
    g = torch.Generator().manual_seed(case["seed"])
    x = torch.randn(case["b"], case["t"], case["d"], generator=g) * 2.0
    return x + case["offset"], sublayers(case)


def stream(x: torch.Tensor, pairs, kind: str = "right") -> torch.Tensor:
    """The reference, or one of the usual slips of it."""
    x0 = x
    if kind == "skip-last":
        pairs = pairs[:-1]
    elif kind == "skip-first":
        pairs = pairs[1:]
    elif kind == "reversed":
        pairs = pairs[::-1]
    with torch.no_grad():
        for norm, f in pairs:
            if kind in ("right", "skip-last", "skip-first", "reversed"):
                x = x + f(norm(x))
            elif kind == "no-add":
                x = f(norm(x))
            elif kind == "embedding":
                x = x + f(norm(x0))
            elif kind == "no-norm":
                x = x + f(x)
            elif kind == "normalised-base":
                h = norm(x)
                x = h + f(h)
            elif kind == "post-norm":
                x = norm(x + f(x))
            elif kind == "branch":
                x = x + norm(f(x))
    return x


def _variants(x, pairs) -> list[Variant]:
    def variant(kind):
        return lambda: stream(x, pairs, kind)

    return [
        Variant("missing-residual", variant("no-add")),
        *(
            Variant(diagnosis, variant(kind), MESSAGES[diagnosis])
            for diagnosis, kind in (
                ("post-norm", "post-norm"),
                ("reads-only-the-embedding", "embedding"),
                ("skipped-sublayer-norm", "no-norm"),
                ("skipped-last-sublayer", "skip-last"),
                ("skipped-first-sublayer", "skip-first"),
                ("sublayer-order", "reversed"),
                ("norm-on-branch", "branch"),
                ("added-to-normalised", "normalised-base"),
            )
        ),
    ]


run_case = calls(inputs)


check_case = tensor_compared(
    inputs,
    reference="stream",
    axes=("batch", "time", "n_embd"),
    what="the final residual stream",
)
