"""The logit lens on a trained tiny model: own token first, then the next.

Trains the reference's `tiny` config for 300 steps on next = (5t + 3) mod 97,
exactly as the lesson's doctest does, then reads the residual stream after
each stage through ln_f and the tied head on 1,024 fresh positions.
"""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model

CAPTION = (
    "Logit lens on the reference's tiny model trained on a successor rule: the "
    "stream reads as its own token at the input and as the next token after "
    "the blocks, with block 0's MLP doing most of the switch"
)

STAGES = ["embedding", "h.0.attn", "h.0.mlp", "h.1.attn", "h.1.mlp"]
LABELS = ["embedding", "+ attn 0", "+ MLP 0", "+ attn 1", "+ MLP 1\n(output)"]


def successor(t):
    return (5 * t + 3) % 97


def _trained_tiny():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: the same weights as the doctest
    try:
        model = build_model("tiny").train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
        g = torch.Generator().manual_seed(0)
        for _ in range(300):
            idx = torch.randint(0, 97, (32, 16), generator=g)
            loss = F.cross_entropy(model(idx).flatten(0, 1), successor(idx).flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
    finally:
        torch.set_num_threads(threads)
    return model.eval(), torch.randint(0, 97, (64, 16), generator=g)


def draw(fig):
    model, idx = _trained_tiny()
    W = model.lm_head.weight.detach()
    own, nxt = [], []
    with torch.no_grad():
        trace = model.forward_trace(idx)
        for stage in STAGES:
            top = (model.transformer.ln_f(trace[stage]) @ W.T).argmax(-1)
            own.append(100 * (top == idx).float().mean().item())
            nxt.append(100 * (top == successor(idx)).float().mean().item())
    ax = fig.add_subplot()
    x = range(len(STAGES))
    ax.plot(x, own, "o-", color="#0072b2", lw=2, label="own token ranked first")
    ax.plot(x, nxt, "s--", color="#d55e00", lw=2, label="next token ranked first")
    for i in x:
        # The higher curve is labelled above its point, the lower one below,
        # so no label sits on a line segment.
        own_above = own[i] >= nxt[i]
        ax.annotate(
            f"{own[i]:.1f}%",
            (i, own[i]),
            xytext=(0, 8) if own_above else (0, -15),
            textcoords="offset points",
            ha="center",
            color="#0072b2",
            fontsize=8,
        )
        ax.annotate(
            f"{nxt[i]:.1f}%",
            (i, nxt[i]),
            xytext=(0, -15) if own_above else (0, 8),
            textcoords="offset points",
            ha="center",
            color="#d55e00",
            fontsize=8,
        )
    ax.set_xticks(list(x), LABELS)
    ax.set_ylim(-8, 110)
    ax.set_ylabel("positions where the token is ranked first (%)")
    ax.set_xlabel("residual stream read after each stage (ln_f, then the tied head)")
    ax.set_title("Trained tiny GPT: from 'this token' to 'the next token'")
    ax.legend(loc="center right", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
