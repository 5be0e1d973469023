"""Where one block's parameters go: GPT-2 small (counted on the reference
block) against Llama-style blocks counted from their published configs."""

import torch
from grading_engine.reference import Block, get_config

CAPTION = (
    "Share of one block's parameters in attention, MLP and norms (biases counted "
    "with their layer): "
    "GPT-2 small, counted on the reference block, against Llama-style blocks "
    "from their published configs; grouped-query attention and a wider SwiGLU "
    "push Llama 3.1 8B to four fifths MLP"
)


def _gpt2_block():
    with torch.device("meta"):
        block = Block(get_config("gpt2"))
    attn = sum(p.numel() for p in block.attn.parameters())
    mlp = sum(p.numel() for p in block.mlp.parameters())
    norms = sum(p.numel() for m in (block.ln_1, block.ln_2) for p in m.parameters())
    return attn, mlp, norms


def _llama_block(d, ffn, n_heads, n_kv_heads):
    head = d // n_heads
    return 2 * d * d + 2 * d * n_kv_heads * head, 3 * d * ffn, 2 * d


def draw(fig):
    rows = [
        ("GPT-2 small\n(d=768, GELU 3,072)", _gpt2_block()),
        ("Llama-style at d=768\n(SwiGLU 2,048)", _llama_block(768, 2048, 12, 12)),
        ("Llama 2 7B\n(d=4,096, SwiGLU 11,008)", _llama_block(4096, 11008, 32, 32)),
        ("Llama 3.1 8B\n(GQA 32/8, SwiGLU 14,336)", _llama_block(4096, 14336, 32, 8)),
    ]
    ax = fig.add_subplot()
    colors = {"attention": "#0072B2", "MLP": "#E69F00", "norms": "#009E73"}
    for i, (_label, (attn, mlp, norms)) in enumerate(rows):
        total = attn + mlp + norms
        left = 0.0
        for part, n in (("attention", attn), ("MLP", mlp), ("norms", norms)):
            share = 100 * n / total
            ax.barh(
                i,
                share,
                left=left,
                color=colors[part],
                label=(part if part != "norms" else "norms (< 0.1%)")
                if i == 0
                else None,
                edgecolor="white",
            )
            if share > 5:
                ax.text(
                    left + share / 2,
                    i,
                    f"{share:.1f}%",
                    ha="center",
                    va="center",
                    color="white" if part == "attention" else "black",
                    fontweight="bold",
                )
            left += share
        ax.text(101, i, f"{total:,}", va="center")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, 125)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("share of one block's parameters (%); total on the right")
    ax.legend(loc="lower right", frameon=False, ncols=3, bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
