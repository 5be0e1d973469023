"""Scores and weights of one attention head, computed on the reference model.

GPT-2 small with the reference's seeded random init (not the trained
weights): layer 0, head 0, on a short sentence. The point is the mechanics,
scores -> mask -> softmax, not what a trained head would look at.
"""

import math

import torch
from grading_engine.reference import build_model, get_encoding

CAPTION = (
    "Layer 0, head 0 of GPT-2 small with random-init weights: scaled scores "
    "q.k/sqrt(64), then the softmax weights; grey cells are the masked future "
    "(weight 0), and each row sums to 1 over the keys it may see"
)
SENTENCE = "The sky is blue because the sun scatters light"


def _head(model, idx, layer=0, head=0):
    block = model.transformer.h[layer]
    with torch.no_grad():
        x = block.ln_1(model._embed(idx))
        B, T, C = x.shape
        hs = C // block.attn.n_head
        q, k, _ = block.attn.c_attn(x).split(C, dim=2)
        q = q.view(B, T, -1, hs).transpose(1, 2)[0, head]  # (T, hs)
        k = k.view(B, T, -1, hs).transpose(1, 2)[0, head]
        scores = q @ k.T / math.sqrt(hs)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(-1)
    return scores, weights, future


def draw(fig):
    enc = get_encoding()
    ids = enc.encode(SENTENCE)
    labels = [repr(enc.decode([i]))[1:-1] for i in ids]
    scores, weights, future = _head(build_model("gpt2"), torch.tensor([ids]))
    T = len(ids)
    ax_s, ax_w = fig.subplots(1, 2)

    shown = scores.masked_fill(future, float("nan")).numpy()
    im = ax_s.imshow(shown, cmap="cividis")
    fig.colorbar(im, ax=ax_s, shrink=0.8, label="scaled score")
    ax_s.set_title("1. scores q.k / 8", fontsize=10)

    im = ax_w.imshow(
        weights.masked_fill(future, float("nan")).numpy(),
        cmap="viridis",
        vmin=0,
        vmax=1,
    )
    fig.colorbar(im, ax=ax_w, shrink=0.8, label="attention weight")
    ax_w.set_title("2. weights (rows sum to 1)", fontsize=10)
    for i in range(T):
        for j in range(i + 1):
            w = weights[i, j].item()
            ax_w.text(
                j,
                i,
                f"{w:.2f}",
                ha="center",
                va="center",
                fontsize=6,
                color="white" if w < 0.5 else "black",
            )

    for ax in (ax_s, ax_w):
        ax.set_facecolor("#dddddd")  # masked cells
        ax.set_xticks(range(T), labels, rotation=60, fontsize=8)
        ax.set_yticks(range(T), labels, fontsize=8)
        ax.set_xlabel("key (attended-to token)")
    ax_s.set_ylabel("query (attending token)")
