"""Which key/value head each query head reads, and what the cache costs.

Left: the head mapping repeat_interleave produces for GPT-2 small's 12 query
heads with 12 (MHA), 4 (GQA) and 1 (MQA) key/value heads. Right: the KV
cache of one 1,024-token sequence in fp16 for a GPT-2-small-shaped model
with each possible number of key/value heads.
"""

import torch
from grading_engine.reference import get_config

CAPTION = (
    "Grouped-query attention: consecutive query heads share a key/value head "
    "(left), and the KV cache shrinks in proportion to the key/value heads "
    "kept (right; GPT-2 small's shape, 1,024 tokens, fp16)"
)


def draw(fig):
    c = get_config("gpt2")
    nh, hs = c.n_head, c.n_embd // c.n_head
    ax, bx = fig.subplots(1, 2, width_ratios=[3, 2])

    rows = [("MHA, 12 kv heads", 12), ("GQA, 4 kv heads", 4), ("MQA, 1 kv head", 1)]
    for r, (_label, n_kv) in enumerate(rows):
        owner = torch.arange(n_kv).repeat_interleave(
            nh // n_kv
        )  # kv head of each q head
        for h, kv in enumerate(owner.tolist()):
            colour = _colour(kv, n_kv)
            ax.add_patch(_square(h, r, colour))
            ax.text(
                h + 0.5,
                r + 0.5,
                str(kv),
                ha="center",
                va="center",
                fontsize=8,
                color="white" if _dark(kv, n_kv) else "black",
            )
    ax.set_xlim(0, nh)
    ax.set_ylim(len(rows), 0)
    ax.set_yticks([r + 0.5 for r in range(len(rows))], [label for label, _ in rows])
    ax.set_xticks([h + 0.5 for h in range(nh)], [str(h) for h in range(nh)], fontsize=8)
    ax.set_xlabel("query head")
    ax.set_title("key/value head read by each query head", fontsize=10)
    ax.set_aspect("equal")
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)

    options = [n for n in range(nh, 0, -1) if nh % n == 0]
    mb = [2 * c.n_layer * n * hs * 1024 * 2 / 1e6 for n in options]
    bars = bx.bar([str(n) for n in options], mb, color="#0072B2")
    for bar, value in zip(bars, mb, strict=True):
        bx.text(
            bar.get_x() + bar.get_width() / 2,
            bar.get_height(),
            f"{value:.1f}",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    bx.set_xlabel("key/value heads kept")
    bx.set_ylabel("KV cache per sequence (MB)")
    bx.set_title("cache at 1,024 tokens, fp16", fontsize=10)
    bx.set_ylim(0, max(mb) * 1.15)
    bx.spines[["top", "right"]].set_visible(False)


def _colour(kv: int, n_kv: int):
    import matplotlib

    return matplotlib.colormaps["viridis"](kv / max(n_kv - 1, 1))


def _dark(kv: int, n_kv: int) -> bool:
    return kv / max(n_kv - 1, 1) < 0.6


def _square(x: int, y: int, colour):
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.05, y + 0.1), 0.9, 0.8, color=colour)
