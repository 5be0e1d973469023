"""Per-token FLOPs of one GPT-2 small block, MLP vs attention, by context length.

Measured with torch's FlopCounterMode on the reference block built on the
meta device (shapes only, no memory), so long contexts cost nothing to draw.
"""

import torch
from grading_engine.reference import Block, get_config
from torch.utils.flop_counter import FlopCounterMode

CAPTION = (
    "Per-token forward FLOPs of one GPT-2 small block, counted on the reference "
    "block: the MLP's cost is flat, attention's grows with context and only "
    "catches up at t = 2d = 1,536, past GPT-2's 1,024-token window"
)


def _per_token(module, t: int, d: int) -> float:
    x = torch.empty(1, t, d, device="meta")
    with FlopCounterMode(display=False) as counter:
        module(x)
    return counter.get_total_flops() / t


def draw(fig):
    cfg = get_config("gpt2")
    d = cfg.n_embd
    with torch.device("meta"):
        block = Block(cfg)
    ts = list(range(64, 2049, 64))
    mlp = [_per_token(block.mlp, t, d) / 1e6 for t in ts]
    attn = [_per_token(block.attn, t, d) / 1e6 for t in ts]
    ax = fig.add_subplot()
    ax.plot(ts, mlp, color="#0072B2", lw=2.2, label="MLP (c_fc, GELU, c_proj)")
    ax.plot(
        ts,
        attn,
        color="#D55E00",
        lw=2.2,
        ls="--",
        label="attention (c_attn, scores, weighted sum, c_proj)",
    )
    ax.axvline(cfg.block_size, color="#555555", lw=1, ls=":")
    ax.text(
        cfg.block_size - 20,
        min(attn) + 0.3,
        f"GPT-2 context\nt = {cfg.block_size:,}",
        ha="right",
        va="bottom",
        color="#333333",
    )
    cross = next(t for t, m, a in zip(ts, mlp, attn, strict=True) if a >= m)
    ax.plot([cross], [mlp[ts.index(cross)]], "o", color="#000000")
    ax.annotate(
        f"equal at t = {cross:,}",
        (cross, mlp[ts.index(cross)]),
        xytext=(cross + 80, mlp[ts.index(cross)] - 2.2),
        arrowprops=dict(arrowstyle="-", color="#333333"),
    )
    ax.set_xlabel("context length t (tokens attended to)")
    ax.set_ylabel("forward FLOPs per token (millions)")
    ax.set_xlim(0, max(ts) + 40)
    ax.set_ylim(0, max(attn) * 1.12)
    ax.legend(loc="upper left", frameon=False)
    ax.set_title("One GPT-2 small block (d = 768): where the per-token compute goes")
    ax.spines[["top", "right"]].set_visible(False)
