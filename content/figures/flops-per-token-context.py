"""Forward FLOPs per token of GPT-2 small, split into weights and attention."""

import torch
from grading_engine.reference import GPT, get_config
from torch.utils.flop_counter import FlopCounterMode

CAPTION = (
    "Forward FLOPs per token of GPT-2 small, measured with FlopCounterMode: "
    "the weight term is fixed, attention grows with the context"
)
CONTEXTS = [128, 256, 512, 1024, 2048, 4096]


def _measured(model, t):
    idx = torch.zeros((1, t), dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter:
        model(idx)
    return counter.get_total_flops() / t


def draw(fig):
    c = get_config("gpt2", block_size=max(CONTEXTS))  # a longer wpe, same blocks
    with torch.device("meta"):
        model = GPT(c)
    L, d, V = c.n_layer, c.n_embd, c.vocab_size
    weights = 2 * (12 * L * d * d + V * d)
    measured = [_measured(model, t) for t in CONTEXTS]
    attention = [m - weights for m in measured]
    labels = [f"{t:,}" for t in CONTEXTS]
    ax = fig.add_subplot()
    ax.bar(
        labels,
        [weights / 1e6] * len(CONTEXTS),
        color="#0072B2",
        label="weights: 2·(12·L·d² + V·d)",
    )
    ax.bar(
        labels,
        [a / 1e6 for a in attention],
        bottom=weights / 1e6,
        color="#E69F00",
        label="attention: 4·L·T·d",
    )
    for x, (m, a) in enumerate(zip(measured, attention, strict=True)):
        ax.text(x, m / 1e6 + 5, f"{a / m:.0%}", ha="center", fontsize=9)
    ax.set_xlabel("context length T (tokens); labels: attention share")
    ax.set_ylabel("forward FLOPs per token (millions)")
    ax.set_ylim(0, max(measured) / 1e6 * 1.15)
    ax.legend(loc="upper left", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
