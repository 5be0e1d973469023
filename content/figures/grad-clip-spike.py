"""One bad batch, with and without gradient-norm clipping at 1.0.

The reference `mini` model learns a simple rule (each token is the previous
plus 7, modulo 211) with AdamW at lr 3e-3. At step 30 one batch's loss is
multiplied by 1,000, standing in for a corrupted batch; the same seeded
batches are used in both runs.
"""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "One batch with a gradient norm in the hundreds: without clipping it "
    "inflates Adam's second-moment estimate and the run loses its progress; "
    "clipped to norm 1.0 the same spike is harmless"
)
STEPS, SPIKE_AT = 80, 30


def run(clip: float | None):
    model = build_model("mini").train()
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    V = model.config.vocab_size
    losses, norms = [], []
    for step in range(STEPS):
        start = torch.randint(0, V, (16, 1), generator=g)
        seq = (start + 7 * torch.arange(33)) % V
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        (loss * (1000.0 if step == SPIKE_AT else 1.0)).backward()
        norm = torch.nn.utils.clip_grad_norm_(
            model.parameters(), clip if clip else float("inf")
        )
        opt.step()
        losses.append(loss.item())
        norms.append(norm.item())
    return losses, norms


def draw(fig):
    plain_loss, plain_norm = run(None)
    clip_loss, clip_norm = run(1.0)
    left, right = fig.subplots(1, 2)
    steps = range(STEPS)
    left.plot(steps, plain_loss, color="#d08c3a", lw=1.6, label="no clipping")
    left.plot(steps, clip_loss, color="#3b6ea8", lw=1.6, label="clip norm at 1.0")
    left.axvline(SPIKE_AT, color="#777777", ls=":", lw=1)
    left.text(SPIKE_AT + 1, max(plain_loss) * 0.95, "bad batch", fontsize=8)
    left.set_xlabel("step")
    left.set_ylabel("training loss (nats)")
    left.legend(fontsize=8, frameon=False)
    left.set_title(
        f"loss at step {STEPS - 1}: {plain_loss[-1]:.2f} unclipped, "
        f"{clip_loss[-1]:.2f} clipped",
        fontsize=9,
    )
    right.semilogy(
        steps,
        plain_norm,
        color="#222222",
        lw=1.2,
        label="gradient norm before clipping",
    )
    right.axhline(1.0, color="#3b6ea8", ls="--", lw=1, label="max_norm = 1.0")
    right.set_xlabel("step")
    right.set_ylabel("global gradient norm (log scale)")
    right.legend(fontsize=8, frameon=False, loc="upper right")
    right.set_title(f"the spike: norm {plain_norm[SPIKE_AT]:,.0f}", fontsize=9)
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
