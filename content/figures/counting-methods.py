"""Three ways to count GPT-2 small, and what each one adds to the true count."""

import torch
from grading_engine.reference import GPT, get_config

CAPTION = (
    "Three sums over the same GPT-2 small (with nanoGPT's mask buffers): only "
    "model.parameters() gives the parameter count; the others add the tied "
    "head's second name and the buffers"
)
COLOURS = {"unique parameters": "#0072B2", "tied name, again": "#E69F00"}
COLOURS["buffers (masks)"] = "#999999"


def _counts():
    """Per method, how many elements are unique parameters, repeats, buffers."""
    with torch.device("meta"):  # shapes without storage
        model = GPT(get_config("gpt2"))
        size = model.config.block_size
        for block in model.transformer.h:  # nanoGPT's non-flash causal mask
            block.attn.register_buffer("bias", torch.ones(1, 1, size, size))
    unique = sum(p.numel() for p in model.parameters())
    every_name = sum(
        p.numel() for _, p in model.named_parameters(remove_duplicate=False)
    )
    state = sum(t.numel() for t in model.state_dict().values())
    buffers = sum(b.numel() for b in model.buffers())
    return {
        "model.parameters()": (unique, 0, 0),
        "named_parameters(\nremove_duplicate=False)": (unique, every_name - unique, 0),
        "state_dict().values()": (unique, state - buffers - unique, buffers),
    }


def draw(fig):
    counts = _counts()
    ax = fig.add_subplot()
    methods = list(counts)
    left = [0.0] * len(methods)
    for i, (part, colour) in enumerate(COLOURS.items()):
        widths = [counts[m][i] / 1e6 for m in methods]
        ax.barh(methods, widths, left=left, color=colour, label=part)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    for y, method in enumerate(methods):
        total = sum(counts[method])
        ax.text(left[y] + 2, y, f"{total:,}", va="center")
    ax.invert_yaxis()
    ax.set_xlim(0, max(left) * 1.5)
    ax.set_xlabel("elements summed (millions)")
    ax.legend(frameon=False, loc="upper right")
    ax.spines[["top", "right"]].set_visible(False)
