"""Attention over already-split heads, with switches for the usual mistakes.

softmax(q k^T / sqrt(d_k)) v on (..., t, d) tensors, in float64: the
reference of the head-level exercises (scaled-dot-product, kv-cache-step,
grouped-query-attention) and, flipped, the wrong computations their
fingerprints compare against. Parent side only.
"""

from __future__ import annotations

import math

import torch


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    scale: str = "d_k",
    mask: str | None = None,
    softmax_dim: int = -1,
) -> torch.Tensor:
    """Attention in float64.

    scale: "d_k" (right), "d_v", "d_k_full" (divided by d_k, not its
    root), "times_sqrt_d_k" (multiplied by the root) or "none". mask:
    None, "causal" (the queries are the LAST t_q of t_k positions, as over
    a KV cache) or "square" (query i treated as position i, the offset
    forgotten).
    """
    q, k, v = q.double(), k.double(), v.double()
    scores = q @ k.transpose(-2, -1)
    if scale == "d_k":
        scores = scores / math.sqrt(q.shape[-1])
    elif scale == "d_v":
        scores = scores / math.sqrt(v.shape[-1])
    elif scale == "d_k_full":
        scores = scores / q.shape[-1]
    elif scale == "times_sqrt_d_k":
        scores = scores * math.sqrt(q.shape[-1])
    if mask is not None:
        t_q, t_k = scores.shape[-2:]
        offset = t_k - t_q if mask == "causal" else 0
        visible = torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=offset)
        scores = scores.masked_fill(~visible, float("-inf"))
    return scores.softmax(dim=softmax_dim) @ v
