"""nanoGPT's GPT-2 learning-rate schedule, and warmup on a toy run.

Left: the schedule of nanoGPT's GPT-2 config (peak 6e-4, 2,000 warmup
steps, cosine to 6e-5 at step 600,000), computed step by step. Right: the
reference `mini` model learning a noisy rule with AdamW at a peak of 4e-2,
with the same seeded batches, without and with warmup plus cosine decay.
"""

import math

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "Warmup ramps the learning rate up over the first steps and cosine decay "
    "brings it down to a tenth by the end; at a high peak, the run without "
    "warmup stalls early and never catches up"
)


def nanogpt_lr(it, peak=6e-4, min_lr=6e-5, warmup=2000, decay=600000):
    if it < warmup:
        return peak * (it + 1) / (warmup + 1)
    if it > decay:
        return min_lr
    ratio = (it - warmup) / (decay - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (peak - min_lr)


def toy_lr(step, steps, peak, warmup):
    if warmup == 0:
        return peak
    if step < warmup:
        return peak * (step + 1) / (warmup + 1)
    ratio = (step - warmup) / (steps - warmup)
    return 0.1 * peak + 0.5 * (1 + math.cos(math.pi * ratio)) * 0.9 * peak


def train(warmup, steps=120, peak=4e-2):
    model = build_model("mini").train()
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=peak, weight_decay=0.0)
    V = model.config.vocab_size
    losses = []
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = toy_lr(step, steps, peak, warmup)
        start = torch.randint(0, V, (16, 1), generator=g)
        seq = (start + 7 * torch.arange(33)) % V
        noise = torch.rand(seq.shape, generator=g) < 0.1  # 10% random tokens
        seq = torch.where(noise, torch.randint(0, V, seq.shape, generator=g), seq)
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def draw(fig):
    left, right = fig.subplots(1, 2)
    its = list(range(0, 600001, 500))
    left.plot(
        [i / 1000 for i in its],
        [nanogpt_lr(i) * 1e4 for i in its],
        color="#3b6ea8",
        lw=1.8,
    )
    left.axvline(2, color="#777777", ls=":", lw=1)
    left.text(10, 6.1, "warmup ends at step 2,000", fontsize=8, color="#555555")
    left.set_xlabel("step (thousands)")
    left.set_ylabel("learning rate (x 1e-4)")
    left.set_ylim(0, 6.6)
    left.set_title("nanoGPT GPT-2: peak 6e-4, cosine to 6e-5", fontsize=9)

    steps = range(120)
    for warmup, colour, label in [
        (0, "#d08c3a", "constant 4e-2, no warmup"),
        (20, "#3b6ea8", "20-step warmup + cosine"),
    ]:
        losses = train(warmup)
        tail = sum(losses[100:]) / 20
        right.plot(
            steps, losses, color=colour, lw=1.4, label=f"{label} (last 20: {tail:.2f})"
        )
    right.set_xlabel("step")
    right.set_ylabel("training loss (nats)")
    right.legend(fontsize=8, frameon=False)
    right.set_title("toy run on the mini model", fontsize=9)
    for ax in (left, right):
        ax.spines[["top", "right"]].set_visible(False)
