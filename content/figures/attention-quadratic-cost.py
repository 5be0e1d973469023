"""Attention's cost against context length, for GPT-2 small's shape.

Left: bytes of one layer's attention-weight matrix for one sequence (12 heads,
fp16) when it is materialised, against the per-row softmax statistics a
FlashAttention-style kernel keeps instead (one fp32 number per row and head).
Right: forward FLOPs per token in one layer: the projections and MLP (24 d^2,
independent of t) against the two attention products (4 t d). All computed
from the reference config.
"""

from grading_engine.reference import get_config

CAPTION = (
    "GPT-2 small's shape: the explicit attention matrix grows as t^2 while a "
    "fused kernel keeps O(t) statistics (left); per token, attention FLOPs grow "
    "with t and overtake the projections and MLP at t = 6d = 4,608 (right)"
)


def draw(fig):
    c = get_config("gpt2")
    d, nh = c.n_embd, c.n_head
    ts = [2**p for p in range(7, 16)]  # 128 .. 32,768 tokens
    ax, bx = fig.subplots(1, 2)

    explicit = [nh * t * t * 2 for t in ts]  # fp16 weights, one layer
    stats = [nh * t * 4 for t in ts]  # one fp32 logsumexp per row and head
    ax.loglog(ts, explicit, "o-", color="#D55E00", label="explicit (t x t per head)")
    ax.loglog(ts, stats, "s-", color="#0072B2", label="fused: row statistics only")
    ax.axvline(c.block_size, color="#777777", linestyle=":", linewidth=1)
    ax.text(c.block_size * 1.1, 1e4, "GPT-2's\ncontext", fontsize=8, color="#555555")
    ax.set_xlabel("context length t (tokens)")
    ax.set_ylabel("bytes per layer, one sequence")
    ax.set_title("attention memory (12 heads)", fontsize=10)
    ax.legend(fontsize=8, frameon=False, loc="upper left")

    dense = [24 * d * d for _ in ts]
    attn = [4 * t * d for t in ts]
    bx.loglog(
        ts,
        [f / 1e6 for f in dense],
        "-",
        color="#009E73",
        label="projections + MLP: 24 d^2",
    )
    bx.loglog(
        ts,
        [f / 1e6 for f in attn],
        "o-",
        color="#D55E00",
        label="q k^T and att v: 4 t d",
    )
    cross = 6 * d
    bx.axvline(cross, color="#777777", linestyle="--", linewidth=1)
    bx.text(cross * 1.1, 1.0, f"t = 6d\n= {cross:,}", fontsize=8, color="#555555")
    bx.axvline(c.block_size, color="#777777", linestyle=":", linewidth=1)
    bx.set_xlabel("context length t (tokens)")
    bx.set_ylabel("MFLOPs per token, one layer")
    bx.set_title("forward FLOPs per token", fontsize=10)
    bx.legend(fontsize=8, frameon=False, loc="upper left")
    for axis in (ax, bx):
        axis.spines[["top", "right"]].set_visible(False)
