"""Small models the parameter, checkpoint and conversion exercises build."""

from __future__ import annotations

import random

import torch
import torch.nn as nn

from grading_engine.reference import get_config


def draw_width(rng: random.Random, layers: tuple[int, int], **fixed) -> dict:
    """Config overrides for a hidden case of odd width: 1..n blocks, 2 to 4
    heads of 4 to 8 channels, a small odd vocabulary; `fixed` adds keys."""
    n_head = rng.choice([2, 3, 4])
    return {
        "n_layer": rng.randint(*layers),
        "n_head": n_head,
        "n_embd": n_head * rng.choice([4, 6, 8]),
        "vocab_size": rng.choice([89, 131, 173]),
        **fixed,
    }


def case_config(case: dict):
    """The reference config a case names, with its drawn overrides."""
    return get_config(case["config"], **case.get("overrides", {}))


def random_model(seed: int, *, device: str = "cpu") -> nn.Module:
    """A small model whose structure (not values) is drawn from `seed`.

    Parent and child build it from the same seed; the parent on the meta
    device, since counting needs shapes and identities only.
    """
    rng = random.Random(seed)
    vocab, width = rng.randint(50, 400), rng.choice([8, 12, 16, 24, 32])
    with torch.device(device):
        net = nn.Module()
        net.embed = nn.Embedding(vocab, width)
        layers = [
            nn.Linear(width, width, bias=rng.random() < 0.7)
            for _ in range(rng.randint(1, 4))
        ]
        layers.append(layers[0])  # one Linear applied twice: counted once
        net.layers = nn.ModuleList(layers)
        net.norm = nn.LayerNorm(width)
        net.head = nn.Linear(width, vocab, bias=False)
        net.head.weight = net.embed.weight  # tied, like GPT-2
        net.frozen = nn.Linear(width, rng.randint(2, 9))
        net.frozen.requires_grad_(False)  # still parameters, just not trained
        net.unused = nn.Parameter(torch.zeros(rng.randint(1, 30)))
        net.temperature = nn.Parameter(torch.tensor(1.0))  # 0-dim: numel 1
        net.register_buffer("scale", torch.ones(rng.randint(2, 40)))
        net.register_buffer("mask", torch.ones(rng.randint(2, 40)), persistent=False)
    return net
