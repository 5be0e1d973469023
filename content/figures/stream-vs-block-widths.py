"""Numbers held per position at each step of one GPT-2 small block, read off
the reference block with forward hooks (meta device: shapes only)."""

import torch
from grading_engine.reference import Block, get_config

CAPTION = (
    "Numbers held per position at each step of one GPT-2 small block at "
    "t = 1,024, read off the reference block: the residual stream (768) is the "
    "narrowest tensor; q/k/v, the attention weights and the MLP hidden layer "
    "are wider, and every sub-layer narrows back to 768 before the add"
)

STREAM, INSIDE, SCORES = "#0072B2", "#E69F00", "#D55E00"


def draw(fig):
    cfg = get_config("gpt2")
    t = cfg.block_size
    with torch.device("meta"):
        block = Block(cfg)
    widths = {}
    wanted = ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj")

    def record(name):
        def hook(module, inputs, output):
            widths[name] = output.shape[-1]  # returns None: output unchanged

        return hook

    hooks = [
        m.register_forward_hook(record(name))
        for name, m in block.named_modules()
        if name in wanted
    ]
    block(torch.empty(1, t, cfg.n_embd, device="meta"))
    for h in hooks:
        h.remove()
    steps = [
        ("stream x", cfg.n_embd, STREAM),
        ("ln_1", widths["ln_1"], INSIDE),
        ("c_attn\n(q, k, v)", widths["attn.c_attn"], INSIDE),
        (f"attention\nweights\n({cfg.n_head} x t)", cfg.n_head * t, SCORES),
        ("attn\nc_proj", widths["attn.c_proj"], INSIDE),
        ("stream\n+ attn", cfg.n_embd, STREAM),
        ("ln_2", widths["ln_2"], INSIDE),
        ("mlp c_fc\n+ GELU", widths["mlp.c_fc"], INSIDE),
        ("mlp\nc_proj", widths["mlp.c_proj"], INSIDE),
        ("stream\n+ mlp", cfg.n_embd, STREAM),
    ]
    ax = fig.add_subplot()
    xs = range(len(steps))
    bars = ax.bar(xs, [w for _, w, _ in steps], color=[c for _, _, c in steps])
    for bar, (_, w, _) in zip(bars, steps, strict=True):
        ax.text(
            bar.get_x() + bar.get_width() / 2,
            w * 1.08,
            f"{w:,}",
            ha="center",
            va="bottom",
            fontsize=9,
        )
    ax.set_yscale("log")
    ax.set_ylim(300, 60000)
    ax.set_xticks(list(xs), [s for s, _, _ in steps], fontsize=8)
    ax.set_ylabel("numbers per position (log scale)")
    ax.set_title(f"One GPT-2 small block, t = {t:,}: blue is the residual stream")
    ax.spines[["top", "right"]].set_visible(False)
