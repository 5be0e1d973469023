"""Sinusoidal positions as an image, and what each scheme says about distance."""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "Left: the sine columns of sinusoidal position vectors (d = 128) for the "
    "first 256 positions; columns with a small index i oscillate fast, those "
    "with a large i slowly. Right: with RoPE "
    "(d_head = 64, identical q and k) the attention score depends only on the "
    "distance and shrinks with it on average, with oscillations; GPT-2's "
    "learned wpe at initialisation relates position 0 to no other position"
)


def sinusoidal(T: int, d: int, base: float = 10000.0) -> torch.Tensor:
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    pe = torch.zeros(T, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe


def rope_score(distance: torch.Tensor, d_head: int, base: float = 10000.0):
    """q . k / d_head for q = k = ones after rotating them `distance` apart."""
    theta = base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)
    # each pair contributes (1, 1) . R(distance * theta) (1, 1) = 2 cos(angle)
    return (2 * torch.cos(distance[:, None] * theta)).sum(dim=1) / d_head


def draw(fig):
    left, right = fig.subplots(1, 2, width_ratios=[1, 1.3])
    pe = sinusoidal(256, 128)
    image = left.imshow(
        pe[:, 0::2].numpy(),  # the sine columns; the cosines are the same waves
        aspect="auto",
        cmap="RdBu_r",
        vmin=-1,
        vmax=1,
        origin="upper",
    )
    left.set_title("sinusoidal PE (fixed, 0 parameters)")
    left.set_xlabel("frequency index i (sine columns 2i)")
    left.set_ylabel("position")
    fig.colorbar(image, ax=left, shrink=0.8, label="value")

    distance = torch.arange(0, 1024, dtype=torch.float64)
    right.plot(
        distance.numpy(),
        rope_score(distance, 64).numpy(),
        color="#0072B2",
        label="RoPE score, q = k (relative by construction)",
    )
    wpe = build_model("gpt2").transformer.wpe.weight.detach()
    learned = F.cosine_similarity(wpe[:1].expand_as(wpe), wpe, dim=1)
    right.plot(
        distance.numpy(),
        learned.numpy(),
        color="#E69F00",
        lw=0.8,
        label="learned wpe at init: cos(row 0, row Δ)",
    )
    right.axhline(0, color="#555555", lw=0.8, ls=":")
    right.set_xlabel("distance Δ between positions (tokens)")
    right.set_ylabel("normalised score / cosine")
    right.set_title("what position says about distance")
    right.legend(frameon=False, loc="upper right", fontsize=8)
    right.spines[["top", "right"]].set_visible(False)
