"""Random logits and token ids for the loss exercises."""

from __future__ import annotations

import random

import torch

from grading_engine.exercises.kit.cases import new_case


def random_logits(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits (b, t, V) scaled by case["scale"], ids (b, t) below V)."""
    b, t, V = case["shape"]
    g = torch.Generator().manual_seed(case["seed"])
    logits = torch.randn(b, t, V, generator=g) * case["scale"]
    ids = torch.randint(0, V, (b, t), generator=g)
    return logits, ids


def draw_logits_cases(
    rng: random.Random,
    label: str,
    *,
    batch: tuple[int, int],
    time: tuple[int, int],
    vocab: list[int],
    scales: tuple[float, ...] = (0.5, 1.0, 3.0),
    count: int = 2,
) -> list[dict]:
    """Hidden random_logits cases "<label> 1", "<label> 2", ...: b and t in
    the given ranges, V and the scale picked from the given lists."""
    return [
        new_case(
            f"{label} {i + 1}",
            True,
            shape=[rng.randint(*batch), rng.randint(*time), rng.choice(vocab)],
            scale=rng.choice(scales),
            seed=rng.randrange(2**31),
        )
        for i in range(count)
    ]
