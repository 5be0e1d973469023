"""Next-token distributions of the reference GPT-2 at several temperatures.

The logits are the reference model's (seeded init) at the last position of
"The sky is". Left: the 30 most likely tokens at each temperature; right:
the entropy of the whole 50,257-way distribution as the temperature moves.
"""

import math

import torch
from grading_engine.reference import build_model

CAPTION = (
    "Dividing the same logits by T: small T piles the mass on the top tokens, "
    "large T spreads it towards uniform (entropy ln 50257 = 10.82 nats); "
    "reference GPT-2 at init, last position of 'The sky is'"
)

SKY = [464, 6766, 318]
TEMPERATURES = [0.05, 0.1, 0.2, 1.0]
COLOURS = ["#d55e00", "#e69f00", "#009e73", "#0072b2"]  # Okabe-Ito


def _logits() -> torch.Tensor:
    model = build_model("gpt2")
    with torch.no_grad():
        return model(torch.tensor([SKY]))[0, -1].double()


def draw(fig):
    logits = _logits()
    order = torch.argsort(logits, descending=True)[:30]
    left, right = fig.subplots(1, 2)
    for T, colour in zip(TEMPERATURES, COLOURS, strict=True):
        p = torch.softmax(logits / T, dim=-1)
        left.plot(
            range(1, 31),
            p[order].numpy(),
            "o-",
            ms=3,
            color=colour,
            label=f"T = {T:g} (top-1 {100 * p.max().item():.2g}%)",
        )
    left.set_yscale("log")
    left.set_xlabel("token rank by logit")
    left.set_ylabel("probability (log scale)")
    left.set_title("Top 30 tokens")
    left.legend(fontsize=8)

    temps = torch.logspace(-2.5, 2, 60, dtype=torch.float64)
    entropy = []
    for T in temps:
        p = torch.softmax(logits / T, dim=-1)
        entropy.append(float(-(p * torch.log(p.clamp_min(1e-300))).sum()))
    right.plot(temps.numpy(), entropy, color="#0072b2")
    ceiling = math.log(logits.numel())
    right.axhline(ceiling, ls="--", color="#555555")
    right.text(
        0.004,
        ceiling - 0.8,
        f"uniform: ln {logits.numel():,} = {ceiling:.2f}",
        fontsize=8,
        color="#555555",
    )
    for T, colour in zip(TEMPERATURES, COLOURS, strict=True):
        p = torch.softmax(logits / T, dim=-1)
        h = float(-(p * torch.log(p.clamp_min(1e-300))).sum())
        right.plot([T], [h], "o", color=colour)
    right.set_xscale("log")
    right.set_xlabel("temperature T (log scale)")
    right.set_ylabel("entropy of softmax(logits / T), nats")
    right.set_ylim(0, ceiling + 0.6)
    right.set_title("Entropy of the full distribution")
