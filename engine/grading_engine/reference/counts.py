"""Closed-form and counted parameter totals: answers, so parent-only.

These are the answers of count-params, block-param-count and
gpt2-param-count. The sandbox stage replaces this module with a stub
(grading_engine.sandbox.staging), so learner code cannot call them.
"""

from __future__ import annotations

import torch.nn as nn

from .model import GPT


def count_parameters(model: nn.Module) -> int:
    """Number of distinct parameter elements; a shared Parameter counts once."""
    seen: set[int] = set()
    total = 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def parameter_breakdown(model: GPT) -> list[tuple[str, int]]:
    """Parameters per top-level part, in forward order.

    A part is credited only with parameters no earlier part owns, so a tied
    lm_head shows 0 and the list sums to count_parameters(model).
    """
    parts: list[tuple[str, nn.Module]] = [
        ("transformer.wte", model.transformer.wte),
        ("transformer.wpe", model.transformer.wpe),
    ]
    parts += [(f"transformer.h.{i}", b) for i, b in enumerate(model.transformer.h)]
    parts += [("transformer.ln_f", model.transformer.ln_f), ("lm_head", model.lm_head)]

    seen: set[int] = set()
    breakdown = []
    for name, part in parts:
        n = 0
        for p in part.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                n += p.numel()
        breakdown.append((name, n))
    return breakdown


def block_parameter_count(n_embd: int) -> int:
    """Parameters in one block: 12 d^2 + 13 d.

    attention: c_attn 3d^2 + 3d, c_proj d^2 + d; MLP: c_fc 4d^2 + 4d,
    c_proj 4d^2 + d; two LayerNorms: 4d.
    """
    d = n_embd
    return 12 * d * d + 13 * d


def gpt2_parameter_count(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, tied: bool = True
) -> int:
    """Closed-form parameter count of a GPT-2 shaped model."""
    d = n_embd
    embeddings = vocab_size * d + block_size * d  # wte + wpe
    blocks = n_layer * block_parameter_count(d)
    ln_f = 2 * d
    head = 0 if tied else vocab_size * d  # a tied head reuses wte
    return embeddings + blocks + ln_f + head
