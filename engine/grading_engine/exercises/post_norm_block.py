"""post-norm-block: wire a GPT-2 block's own modules the 2017 way.

Post-norm (Vaswani et al., 2017) normalises AFTER each residual add,
x = ln_1(x + attn(x)), then x = ln_2(x + mlp(x)); GPT-2's pre-norm block
computes x + attn(ln_1(x)) and x + mlp(ln_2(x)) (lesson
pre-norm-vs-post-norm). The block's LayerNorms get distinct random affine
parameters, so swapping them shows; inputs have an offset and a scale far
from 1, so a norm in the wrong place shows too.
"""

from __future__ import annotations

import math
import random

import torch
from torch import nn

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import new_case, size_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.reference import Block, get_config

SLUG = "post-norm-block"
ENTRY_POINT = "post_norm_block"
SIGNATURE = "post_norm_block(x, block) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

MESSAGES = {
    "pre-norm-not-post-norm": (
        "your output matches GPT-2's own pre-norm block, x + attn(ln_1(x)): "
        "post-norm adds first and normalises the SUM, x = ln_1(x + attn(x)), "
        "so the stream itself is re-standardised after every sub-layer"
    ),
    "missing-residual": (
        "your output matches ln_1(attn(x)) then ln_2(mlp(x)), without the "
        "residual adds: post-norm still adds the sub-layer's input back "
        "before normalising, ln_1(x + attn(x))"
    ),
    "swapped-norms": (
        "your output matches ln_2 after attention and ln_1 after the MLP: "
        "each LayerNorm has its own learned gamma and beta; ln_1 goes with "
        "attention and ln_2 with the MLP, in either wiring"
    ),
    "norm-on-branch": (
        "your output matches x + ln_1(attn(x)): that normalises only the "
        "sub-layer's output and leaves the stream growing; post-norm "
        "normalises the sum, ln_1(x + attn(x))"
    ),
    "stale-stream": (
        "your output matches an MLP that reads the stream from BEFORE "
        "attention, ln_2(h + mlp(x)) with h = ln_1(x + attn(x)): the "
        "sub-layers run in order, so the MLP reads (and adds to) the stream "
        "attention just wrote, x = ln_2(x + mlp(x)) with the new x"
    ),
    "stale-residual": (
        "your output matches ln_2(x + mlp(h)) with h = ln_1(x + attn(x)) "
        "and x the block's input: the MLP reads the right stream, but its "
        "residual add starts from the stream before attention. Add the MLP's "
        "output to the stream attention just wrote, h + mlp(h)"
    ),
    "missing-norm": (
        "your output matches the block without ln_2: post-norm normalises "
        "after EACH residual add, x = ln_1(x + attn(x)), then "
        "x = ln_2(x + mlp(x))"
    ),
    "sublayer-order": (
        "your output matches the MLP run before attention: a block runs "
        "attention first (with ln_1), then the MLP (with ln_2)"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("tiny block (d=16, 2 heads), (2, 5, 16)", False,
                 b=2, t=5, n_embd=16, n_head=2, offset=1.0),
        new_case("mini block (d=32, 4 heads), (1, 8, 32)", False,
                 b=1, t=8, n_embd=32, n_head=4, offset=3.0),
        *(new_case(f"hidden {i + 1}", True) for i in range(3)),
    ]  # fmt: skip

    def draw() -> dict:
        n_head = rng.choice([1, 2, 3, 4])
        return {
            "b": rng.randint(1, 3),
            "t": rng.randint(2, 12),
            "n_embd": n_head * rng.choice([4, 6, 8]),
            "n_head": n_head,
            "offset": rng.choice([0.5, 2.0, 5.0]),
        }

    return size_cases(cases, rng, {}, draw)


def inputs(case: dict) -> tuple[torch.Tensor, Block]:
    """(x, block): a reference Block with seeded weights and LayerNorms."""
    config = get_config(
        "tiny", n_embd=case["n_embd"], n_head=case["n_head"], block_size=16
    )
    # PyTorch's default init for a Linear, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    # for weight and bias, drawn from the case's own generator: the judge
    # builds this block in one of several grading threads at once, and
    # torch's global generator is shared by all of them.
    with torch.device("meta"):
        block = Block(config)
    block.to_empty(device="cpu")
    g = torch.Generator().manual_seed(case["seed"])
    with torch.no_grad():
        for module in block.modules():
            if isinstance(module, nn.Linear):
                bound = 1 / math.sqrt(module.in_features)
                module.weight.uniform_(-bound, bound, generator=g)
                module.bias.uniform_(-bound, bound, generator=g)
        for ln in (block.ln_1, block.ln_2):
            ln.weight.copy_(1.0 + 0.4 * torch.randn(config.n_embd, generator=g))
            ln.bias.copy_(0.3 * torch.randn(config.n_embd, generator=g))
    block.requires_grad_(False)
    x = torch.randn(case["b"], case["t"], config.n_embd, generator=g) * 2.0
    return x + case["offset"], block


def wired(x: torch.Tensor, block: Block, kind: str = "post") -> torch.Tensor:
    """The block wired post-norm, or as one of the usual slips."""
    b = block
    with torch.no_grad():
        if kind == "post":
            x = b.ln_1(x + b.attn(x))
            return b.ln_2(x + b.mlp(x))
        if kind == "pre":
            return b(x)
        if kind == "no-residual":
            return b.ln_2(b.mlp(b.ln_1(b.attn(x))))
        if kind == "swapped":
            x = b.ln_2(x + b.attn(x))
            return b.ln_1(x + b.mlp(x))
        if kind == "stale":
            h = b.ln_1(x + b.attn(x))
            return b.ln_2(h + b.mlp(x))
        if kind == "stale-residual":
            h = b.ln_1(x + b.attn(x))
            return b.ln_2(x + b.mlp(h))
        if kind == "no-ln-2":
            x = b.ln_1(x + b.attn(x))
            return x + b.mlp(x)
        if kind == "mlp-first":
            x = b.ln_2(x + b.mlp(x))
            return b.ln_1(x + b.attn(x))
        x = x + b.ln_1(b.attn(x))  # "branch"
        return x + b.ln_2(b.mlp(x))


def _variants(x, block) -> list[Variant]:
    kinds = {
        "pre-norm-not-post-norm": "pre",
        "missing-residual": "no-residual",
        "swapped-norms": "swapped",
        "norm-on-branch": "branch",
        "stale-stream": "stale",
        "stale-residual": "stale-residual",
        "missing-norm": "no-ln-2",
        "sublayer-order": "mlp-first",
    }
    return [
        Variant(d, lambda k=k: wired(x, block, k), MESSAGES[d])
        for d, k in kinds.items()
    ]


run_case = calls(inputs)


check_case = tensor_compared(
    inputs,
    reference="wired",
    axes=("batch", "time", "n_embd"),
    what="the block's output",
)
