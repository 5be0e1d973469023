"""Inputs and targets of the causal LM objective, and the loss each pairing gives.

Tokens come from the GPT-2 tokenizer; the losses from one forward pass of the
seeded (untrained) reference GPT-2 small.
"""

import math

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model, get_encoding

TEXT = "The sky is blue and the grass is green"
CAPTION = (
    "Targets are the inputs moved one step left: 9 tokens give 8 predictions. "
    "Scoring each position against its own token instead (no shift) gives a "
    "loss below ln V at init, a leak, not learning"
)


def draw(fig):
    enc = get_encoding()
    ids = enc.encode(TEXT)
    words = [enc.decode([i]).replace(" ", "\u2423") for i in ids]
    idx = torch.tensor([ids])
    with torch.no_grad():
        logits = build_model("gpt2")(idx)[0]  # (t, V)
    V = logits.size(-1)
    shifted = F.cross_entropy(logits[:-1], idx[0, 1:], reduction="none")
    own = F.cross_entropy(logits[:-1], idx[0, :-1], reduction="none")

    top, bottom = fig.subplots(2, 1, height_ratios=[1, 1.6])
    t = len(ids)
    for i, w in enumerate(words):
        top.text(
            i,
            1,
            w,
            ha="center",
            va="center",
            fontsize=9,
            bbox={"boxstyle": "round", "fc": "#dbe6f3", "ec": "#3b6ea8"},
        )
        if i >= 1:
            top.text(
                i - 1,
                0,
                w,
                ha="center",
                va="center",
                fontsize=9,
                bbox={"boxstyle": "round", "fc": "#f6e0c4", "ec": "#b5651d"},
            )
            top.annotate(
                "",
                xy=(i - 1, 0.22),
                xytext=(i - 1, 0.78),
                arrowprops={"arrowstyle": "->", "color": "#555555"},
            )
    top.text(t - 1, 0, "(none)", ha="center", va="center", fontsize=8, color="#777777")
    top.set_yticks([0, 1], ["target idx[i+1]", "input idx[i]"])
    top.set_xticks(range(t), [f"i={i}" for i in range(t)], fontsize=8)
    top.set_xlim(-0.6, t - 0.4)
    top.set_ylim(-0.5, 1.5)
    top.spines[["top", "right", "left", "bottom"]].set_visible(False)
    top.tick_params(length=0)

    x = torch.arange(t - 1).numpy()
    width = 0.38
    bottom.bar(
        x - width / 2,
        shifted.numpy(),
        width,
        color="#3b6ea8",
        label="target = next token (correct)",
    )
    bottom.bar(
        x + width / 2,
        own.numpy(),
        width,
        color="#d08c3a",
        label="target = own token (no shift)",
    )
    bottom.axhline(math.log(V), color="#222222", ls="--", lw=1)
    bottom.text(
        t - 1.6,
        math.log(V) + 0.15,
        f"ln {V:,} = {math.log(V):.2f}",
        ha="right",
        fontsize=8,
    )
    bottom.set_xticks(
        x,
        [f"{a}\u2192{b}" for a, b in zip(words[:-1], words[1:], strict=True)],
        fontsize=8,
    )
    bottom.set_ylabel("loss at position (nats)")
    bottom.set_ylim(8, 13.8)
    bottom.legend(loc="upper right", fontsize=8, ncols=2, frameon=False)
    bottom.set_title(
        f"untrained GPT-2 small: mean {shifted.mean():.2f} shifted, "
        f"{own.mean():.2f} unshifted",
        fontsize=9,
    )
    bottom.spines[["top", "right"]].set_visible(False)
