"""KV-cache bytes against context length for the four GPT-2 sizes.

Computed from the reference configs: 2 (k and v) x n_layer x n_embd values
per token, in fp16. The right panel sets the cache at GPT-2's full context
against the weights (also fp16), as the number of sequences whose cache
would weigh as much as the model.
"""

from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "KV-cache size grows linearly with context: 2 x n_layer x n_embd values "
    "per token (fp16, one sequence); at 1,024 tokens a handful of sequences "
    "already weigh as much as the weights"
)
SIZES = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")
LABELS = {
    "gpt2": "small",
    "gpt2-medium": "medium",
    "gpt2-large": "large",
    "gpt2-xl": "xl",
}
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7")  # Okabe-Ito
BYTES = 2  # fp16 / bf16


def _per_token(name: str) -> int:
    c = get_config(name)
    return 2 * c.n_layer * c.n_embd * BYTES


def draw(fig):
    ax, bx = fig.subplots(1, 2, width_ratios=[3, 2])
    contexts = list(range(0, 1025, 32))
    for name, colour in zip(SIZES, COLOURS, strict=True):
        per_token = _per_token(name)
        ax.plot(
            contexts,
            [per_token * t / 1e6 for t in contexts],
            color=colour,
            label=f"{LABELS[name]}: {per_token / 1024:.0f} KiB/token",
        )
        at_full = per_token * 1024 / 1e6
        ax.annotate(
            f"{at_full:.0f} MB",
            (1024, at_full),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
            color=colour,
        )
    ax.set_xlim(0, 1200)
    ax.set_xlabel("context length (tokens)")
    ax.set_ylabel("KV cache, one sequence (MB, fp16)")
    ax.set_title("Cache grows linearly with context", fontsize=10)
    ax.legend(fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)

    ratios = []
    for name in SIZES:
        c = get_config(name)
        n = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
        ratios.append(n * BYTES / (_per_token(name) * 1024))
    bars = bx.bar([LABELS[n] for n in SIZES], ratios, color=COLOURS)
    for bar, r in zip(bars, ratios, strict=True):
        bx.text(
            bar.get_x() + bar.get_width() / 2,
            bar.get_height(),
            f"{r:.1f}",
            ha="center",
            va="bottom",
            fontsize=9,
        )
    bx.set_ylabel("sequences of 1,024 tokens")
    bx.set_title("Sequences whose cache equals\nthe weights (both fp16)", fontsize=10)
    bx.set_ylim(0, max(ratios) * 1.2)
    bx.spines[["top", "right"]].set_visible(False)
