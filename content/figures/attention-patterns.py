"""Attention patterns on a repeated random sequence, computed, not drawn.

Left: the reference GPT-2 small with its seeded random init (not the trained
weights), the head with the highest induction score: near-uniform over the
past, no pattern. Middle and right: the two heads of a hand-built two-layer
induction circuit on one-hot features (the same construction as the
lesson's doctest): a previous-token head, then an induction head whose
stripe sits one step after each token's earlier occurrence.
"""

import math

import torch
from grading_engine.reference import build_model

CAPTION = (
    "Attention on a sequence repeated twice: random-init GPT-2 small shows no "
    "pattern (left); a hand-built previous-token head (middle) and the "
    "induction head that reads its output (right) show the diagonal stripes "
    "that interpretability work looks for in trained models"
)
P = 12  # period: the sequence is P random tokens, then the same P again


def _gpt2_maps(idx):
    model = build_model("gpt2")
    maps = []
    with torch.no_grad():
        x = model._embed(idx)
        for block in model.transformer.h:
            a = block.ln_1(x)
            B, T, C = a.shape
            nh = block.attn.n_head
            q, k, _ = (
                z.view(B, T, nh, C // nh).transpose(1, 2)
                for z in block.attn.c_attn(a).split(C, dim=2)
            )
            s = q @ k.transpose(-2, -1) / math.sqrt(C // nh)
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
            maps.append(s.softmax(-1)[0])
            x = x + block.attn(a)
            x = x + block.mlp(block.ln_2(x))
    return torch.stack(maps)  # (n_layer, n_head, T, T)


def _toy(tokens, vocab, beta=20.0):
    T = len(tokens)
    tok = torch.eye(vocab)[tokens]
    pos = torch.eye(T)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)

    def attend(q, k):
        return (beta * q @ k.T).masked_fill(future, float("-inf")).softmax(-1)

    prev_q = torch.roll(pos, -1, dims=1)
    prev_q[0] = pos[0]
    att1 = attend(prev_q, pos)
    prev_tok = att1 @ tok
    prev_tok[0] = 0
    return att1, attend(tok, prev_tok)


def _induction(maps):
    i = torch.arange(P, 2 * P)
    return maps[..., i, i - P + 1].mean(-1)


def draw(fig):
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(1000, 10000, (P,), generator=g)
    maps = _gpt2_maps(torch.cat([idx, idx])[None])
    scores = _induction(maps)
    layer, head = divmod(int(scores.flatten().argmax()), maps.shape[1])

    vocab = 2 * P
    first = torch.randperm(vocab, generator=g)[:P]
    prev_head, ind_head = _toy(torch.cat([first, first]), vocab)

    panels = [
        (maps[layer, head], f"GPT-2 small, random init\nlayer {layer}, head {head}"),
        (prev_head, "toy layer 1:\nprevious-token head"),
        (ind_head, "toy layer 2:\ninduction head"),
    ]
    axes = fig.subplots(1, 3)
    future = torch.ones(2 * P, 2 * P, dtype=torch.bool).triu(1)
    for ax, (weights, title) in zip(axes, panels, strict=True):
        im = ax.imshow(
            weights.masked_fill(future, float("nan")).numpy(),
            cmap="viridis",
            vmin=0,
            vmax=1,
        )
        ax.set_facecolor("#dddddd")
        ax.set_title(title, fontsize=9)
        ax.axhline(P - 0.5, color="white", linewidth=0.6, linestyle="--")
        ax.set_xlabel("key position")
        ax.set_xticks([0, P, 2 * P - 1])
        ax.set_yticks([0, P, 2 * P - 1])
    axes[0].set_ylabel("query position (repeat starts at 12)")
    fig.colorbar(im, ax=axes, shrink=0.7, label="attention weight")
