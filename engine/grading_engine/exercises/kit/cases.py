"""Case specs, and the seeded draws that make a case the same in child and parent."""

from __future__ import annotations

import random
from collections.abc import Callable

import torch


def case_seed(rng: random.Random, case: dict, index: int) -> int:
    """A visible case is seeded by its position (the same feedback every
    attempt); a hidden one draws from the attempt's seed."""
    return rng.randrange(2**31) if case["hidden"] else index


def seed_cases(cases: list[dict], rng: random.Random) -> list[dict]:
    """Give every case its `seed` (see case_seed), in order."""
    for index, case in enumerate(cases):
        case["seed"] = case_seed(rng, case, index)
    return cases


def normal(seed: int, *shapes) -> list[torch.Tensor]:
    """One standard-normal tensor per shape, drawn in order from `seed`."""
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g) for shape in shapes]


def new_case(name: str, hidden: bool, **spec) -> dict:
    """A case spec: its name, whether it is hidden, and what builds it."""
    return {"name": name, "hidden": hidden, **spec}


def size_cases(
    cases: list[dict], rng: random.Random, visible: dict, draw: Callable[[], dict]
) -> list[dict]:
    """Visible cases get the fixed sizes `visible`, hidden ones a fresh
    `draw()`; then each case its seed (see case_seed), in order."""
    for index, case in enumerate(cases):
        case.update(draw() if case["hidden"] else visible)
        case["seed"] = case_seed(rng, case, index)
    return cases
