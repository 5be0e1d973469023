"""embed-tokens: token embedding plus position embedding, (b, t) -> (b, t, d).

The visible case uses GPT-2 small's tables and "The sky is"; hidden cases
draw a config, a batch and a length from the attempt seed.
"""

from __future__ import annotations

import math
import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.tensors import (
    check_no_error,
    compare_tensor,
    failed,
    run_and_capture,
)
from grader.reference import get_config
from grader.reference.cache import reference_model

SLUG = "embed-tokens"
ENTRY_POINT = "embed"
SIGNATURE = "embed(idx, wte, wpe) -> Tensor"

SKY = [464, 6766, 318]  # "The sky is"
RTOL, ATOL = 1e-5, 1e-6
_ERRORS = [
    (
        "must match the size of tensor",
        "position-table-not-sliced",
        "the position table has block_size rows but idx has only t columns: "
        "add wpe[:t] (or wpe[torch.arange(t)]), not the whole table",
    ),
    (
        "out of bounds",
        "positions-from-token-ids",
        "an index was out of range: look up wte with the token ids and wpe "
        "with the positions 0..t-1, never wpe with the token ids",
    ),
]


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "gpt2 'The sky is'", "hidden": False, "config": "gpt2", "idx": [SKY]},
        {"name": "tiny, batch of 3", "hidden": False, "config": "tiny", "b": 3, "t": 5},
    ]
    for i in range(3):
        config = rng.choice(["tiny", "mini", "random"])
        case = {"name": f"hidden {i + 1}", "hidden": True, "config": config}
        if config == "random":
            case["sizes"] = {
                "vocab_size": rng.choice([101, 127, 173, 257]),
                "block_size": rng.choice([24, 40, 48]),
                "n_embd": rng.choice([12, 20, 36]),
            }
        block = case.get("sizes", {}).get("block_size") or get_config(config).block_size
        case["b"] = rng.randint(2, 4)
        case["t"] = rng.randint(3, block - 1)  # never the whole table
        case["seed"] = rng.randrange(2**31)
        cases.append(case)
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(idx, wte, wpe) for a case; the same in the child and the parent."""
    if case["config"] == "gpt2":
        model = reference_model("gpt2")
        idx = torch.tensor(case["idx"], dtype=torch.long)
        return (
            idx,
            model.transformer.wte.weight.detach(),
            model.transformer.wpe.weight.detach(),
        )
    sizes = case.get("sizes") or {}
    config = get_config(
        "tiny" if case["config"] == "random" else case["config"], **sizes
    )
    g = torch.Generator().manual_seed(case.get("seed", 0))
    wte = torch.randn(config.vocab_size, config.n_embd, generator=g) * 0.5
    wpe = torch.randn(config.block_size, config.n_embd, generator=g) * 0.5
    idx = torch.randint(0, config.vocab_size, (case["b"], case["t"]), generator=g)
    return idx, wte, wpe


def reference(idx, wte, wpe):
    return wte[idx] + wpe[: idx.shape[1]]


def run_case(fn, case: dict):
    return run_and_capture(fn, *inputs(case))


def check_case(case: dict, data: dict, tensors: dict):
    hidden = bool(case["hidden"])
    name = case["name"]
    raised = check_no_error(name, data.get("error"), patterns=_ERRORS, hidden=hidden)
    if raised:
        return [raised]
    idx, wte, wpe = inputs(case)
    expected = reference(idx, wte, wpe)
    got = tensors.get("output")
    b, t = idx.shape
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "n_embd"),
        sizes={"vocab_size": wte.shape[0], "block_size": wpe.shape[0]},
        shape_hints={
            "missing:batch": (None, "index wte with the whole (b, t) idx"),
            "replaced:time->block_size": (
                "position-table-not-sliced",
                "add only the first t rows of wpe",
            ),
        },
        rtol=RTOL,
        atol=ATOL,
        what="the embedding",
        hidden=hidden,
    )
    if failed(results) and got is not None and got.shape == expected.shape:
        variants = [
            Variant("missing-position-embedding", lambda: wte[idx]),
            Variant(
                "scaled-embedding",
                lambda: wte[idx] * math.sqrt(wte.shape[1]) + wpe[:t],
                "your output matches the token embedding multiplied by "
                "sqrt(n_embd), as in the original Transformer paper: GPT-2 adds "
                "wte[idx] + wpe[:t] with no scaling",
            ),
            Variant(
                "positions-off-by-one",
                lambda: wte[idx] + wpe[1 : t + 1],
                "your output matches positions 1..t: positions start at 0, "
                "so add wpe[:t]",
            ),
        ]
        match = fingerprint(
            name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
        )
        if match:
            results.append(match)
    return results
