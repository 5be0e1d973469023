"""Activation bytes GPT-2 small saves for backward, against sequence length."""

import torch
from grading_engine.reference import GPT, get_config
from torch.utils.checkpoint import checkpoint

CAPTION = (
    "Bytes GPT-2 small's forward pass saves for backward (fp32, one sequence), "
    "measured with saved_tensors_hooks: the per-token part grows with t, the "
    "attention scores with t², and checkpointing every block keeps only d per token"
)
CONTEXTS = [0, 64, 128, 256, 384, 512, 640, 768, 896, 1024]
MEASURED = [128, 512, 1024]


def _saved_bytes(model, t, recompute):
    weights = {p.untyped_storage()._cdata for p in model.parameters()}
    saved = {}

    def pack(x):
        storage = x.untyped_storage()
        if storage._cdata not in weights:
            saved[storage._cdata] = storage.nbytes()
        return x

    idx = torch.zeros((1, t), dtype=torch.long, device="meta")
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        x = model._embed(idx)
        for block in model.transformer.h:
            x = checkpoint(block, x, use_reentrant=False) if recompute else block(x)
        model.lm_head(model.transformer.ln_f(x))
    return sum(saved.values())


def draw(fig):
    c = get_config("gpt2")
    with torch.device("meta"):  # shapes only: nothing is computed
        model = GPT(c).train()
    L, d, heads = c.n_layer, c.n_embd, c.n_head
    linear = [L * t * (64 * d + 16) / 1e6 for t in CONTEXTS]
    scores = [L * (4 * heads * t * t + t * t) / 1e6 for t in CONTEXTS]
    ax = fig.add_subplot()
    ax.stackplot(
        CONTEXTS,
        linear,
        scores,
        colors=["#0072B2", "#E69F00"],
        labels=[
            "per-token tensors: L·t·(64d + 16) bytes",
            "attention scores and mask: L·(4·heads + 1)·t² bytes",
        ],
        alpha=0.85,
    )
    full = [_saved_bytes(model, t, False) / 1e6 for t in MEASURED]
    ckpt = [_saved_bytes(model, t, True) / 1e6 for t in MEASURED]
    ax.plot(MEASURED, full, "ko", label="measured, no checkpointing")
    ax.plot(
        MEASURED,
        ckpt,
        "s-",
        color="#CC79A7",
        label="measured, every block checkpointed",
    )
    for t, mb in zip(MEASURED, full, strict=True):
        ax.annotate(f"{mb:,.0f} MB", (t, mb), xytext=(-8, 8),
                    textcoords="offset points", ha="right")  # fmt: skip
    ax.annotate(f"{ckpt[-1]:,.1f} MB", (MEASURED[-1], ckpt[-1]), xytext=(-8, 8),
                textcoords="offset points", ha="right", color="#CC79A7")  # fmt: skip
    ax.set_xlabel("sequence length t (tokens), batch of 1")
    ax.set_ylabel("saved activations (MB, 10^6 bytes)")
    ax.set_xlim(0, max(CONTEXTS) * 1.02)
    ax.set_ylim(0, max(full) * 1.15)
    ax.legend(loc="upper left", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
