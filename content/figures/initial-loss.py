"""The loss of GPT-2 at initialisation, measured on the reference model.

Left: per-position cross-entropy of the seeded reference on 4 x 128 random
next-token targets. Right: the mean loss when the same logits are scaled by
k (as if the head were initialised with std 0.02 k), against the Gaussian
estimate ln V + sigma^2 / 2.
"""

import math

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "GPT-2 small at init: per-position losses cluster around ln 50257 = 10.82, "
    "slightly above it because the logits are not exactly equal; scaling the "
    "logits up (a larger init std) raises the first loss quickly"
)

SCALES = [0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 6]


def _logits_and_targets():
    model = build_model("gpt2")
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, model.config.vocab_size, (4, 129), generator=g)
    with torch.no_grad():
        logits = model(idx[:, :-1]).flatten(0, 1)
    return logits, idx[:, 1:].flatten()


def draw(fig):
    logits, targets = _logits_and_targets()
    V = logits.shape[-1]
    ln_v = math.log(V)
    losses = F.cross_entropy(logits, targets, reduction="none")
    sigma = logits.std().item()

    left, right = fig.subplots(1, 2)
    left.hist(losses.numpy(), bins=40, color="#0072b2", alpha=0.85)
    left.axvline(ln_v, color="#d55e00", ls="--", label=f"ln {V:,} = {ln_v:.2f}")
    left.axvline(
        losses.mean().item(),
        color="#000000",
        label=f"mean = {losses.mean().item():.2f}",
    )
    left.set_xlabel("cross-entropy at one position (nats)")
    left.set_ylabel(f"positions (of {losses.numel():,})")
    left.set_title("Per-position loss at init")
    left.legend(fontsize=8, loc="upper right")

    measured = [F.cross_entropy(logits * k, targets).item() for k in SCALES]
    estimate = [ln_v + (k * sigma) ** 2 / 2 for k in SCALES]
    stds = [0.02 * k for k in SCALES]
    right.plot(stds, measured, "o-", color="#0072b2", label="measured mean loss")
    right.plot(
        stds,
        estimate,
        "s--",
        color="#d55e00",
        ms=4,
        label="ln V + sigma^2 / 2 (sigma = logit std)",
    )
    right.axhline(ln_v, color="#555555", lw=0.8)
    right.axvline(0.02, color="#999999", lw=0.8, ls=":")
    right.text(0.022, ln_v + 0.45, "GPT-2's 0.02", fontsize=8, color="#555555")
    right.set_xlabel("std of the head's init (logits scaled to match)")
    right.set_ylabel("mean loss at init (nats)")
    right.set_title("Larger init, larger first loss")
    right.legend(fontsize=8, loc="upper left")
