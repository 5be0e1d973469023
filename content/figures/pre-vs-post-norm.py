"""Pre-norm (GPT-2) vs post-norm (original Transformer) on the same weights at
init: the residual stream's std and each block's gradient norm."""

import torch
import torch.nn.functional as F
from grading_engine.reference import build_model, get_config

CAPTION = (
    "The same GPT-2-small-shaped weights at init, wired pre-norm (GPT-2) and "
    "post-norm (original Transformer): post-norm pins the stream to std 1 after "
    "every block, pre-norm lets it grow, which is why GPT-2 needs ln_f; the "
    "gradients reaching each block differ too (vocabulary cut to 4,096 for speed)"
)

PRE, POST = "#0072B2", "#D55E00"


def run(model, idx, post: bool):
    """Forward + backward on next-token loss; stream stds and block grad norms."""
    model.zero_grad()
    inp, tgt = idx[:, :-1], idx[:, 1:]
    x = model._embed(inp)
    stds = []
    for block in model.transformer.h:
        if post:  # x = LN(x + F(x)), Vaswani et al. (2017)
            x = block.ln_1(x + block.attn(x))
            x = block.ln_2(x + block.mlp(x))
        else:  # x = x + F(LN(x)), GPT-2
            x = x + block.attn(block.ln_1(x))
            x = x + block.mlp(block.ln_2(x))
        stds.append(x.std().item())
    if not post:
        x = model.transformer.ln_f(x)
    loss = F.cross_entropy(model.lm_head(x).flatten(0, 1), tgt.flatten())
    loss.backward()
    grads = [
        torch.cat([p.grad.flatten() for p in b.parameters()]).norm().item()
        for b in model.transformer.h
    ]
    return stds, grads


def draw(fig):
    cfg = get_config("gpt2", vocab_size=4096)
    model = build_model(cfg)
    idx = torch.randint(
        0, cfg.vocab_size, (2, 33), generator=torch.Generator().manual_seed(0)
    )
    pre = run(model, idx, post=False)
    post = run(model, idx, post=True)
    blocks = list(range(1, cfg.n_layer + 1))
    left, right = fig.subplots(1, 2)
    for (stds, _), color, style, label in [
        (pre, PRE, "-", "pre-norm: x + F(LN(x))"),
        (post, POST, "--", "post-norm: LN(x + F(x))"),
    ]:
        left.plot(
            blocks, stds, color=color, ls=style, marker="o", ms=3, lw=2, label=label
        )
    left.set_xlabel("block")
    left.set_ylabel("std of the residual stream after the block")
    left.set_title("Stream scale at init")
    left.set_ylim(0, 1.15)
    left.legend(loc="center right", frameon=False)
    for (_, grads), color, style, label in [
        (pre, PRE, "-", "pre-norm"),
        (post, POST, "--", "post-norm"),
    ]:
        right.plot(
            blocks, grads, color=color, ls=style, marker="o", ms=3, lw=2, label=label
        )
    right.set_ylim(bottom=0)
    right.set_xlabel("block")
    right.set_ylabel("gradient norm of the block's parameters")
    right.set_title("Gradient reaching each block at init")
    right.legend(loc="upper right", frameon=False)
    for ax in (left, right):
        ax.set_xticks(blocks)
        ax.spines[["top", "right"]].set_visible(False)
