"""Token ids and embedding tables (wte, wpe) for the embedding exercises.

A case is GPT-2 small's own tables ("config": "gpt2", with its "idx"), or
seeded random tables of a small config ("tiny", "mini", or "random": tiny
with drawn sizes) and a (b, t) batch of ids drawn from them.
"""

from __future__ import annotations

import random

import torch

from grading_engine.exercises.kit.sky import gpt2_tables
from grading_engine.reference import get_config


def draw_table(rng: random.Random) -> tuple[dict, int]:
    """A hidden case's table spec and its number of positions (block_size)."""
    config = rng.choice(["tiny", "mini", "random"])
    spec: dict = {"config": config}
    if config == "random":
        spec["sizes"] = {
            "vocab_size": rng.choice([101, 127, 173, 257]),
            "block_size": rng.choice([24, 40, 48]),
            "n_embd": rng.choice([12, 20, 36]),
        }
    block = spec.get("sizes", {}).get("block_size") or get_config(config).block_size
    return spec, block


def tables(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(idx, wte, wpe) for a case; the same in the child and the parent."""
    if case["config"] == "gpt2":
        return (torch.tensor(case["idx"], dtype=torch.long), *gpt2_tables())
    sizes = case.get("sizes") or {}
    config = get_config(
        "tiny" if case["config"] == "random" else case["config"], **sizes
    )
    g = torch.Generator().manual_seed(case.get("seed", 0))
    wte = torch.randn(config.vocab_size, config.n_embd, generator=g) * 0.5
    wpe = torch.randn(config.block_size, config.n_embd, generator=g) * 0.5
    idx = torch.randint(0, config.vocab_size, (case["b"], case["t"]), generator=g)
    return idx, wte, wpe
