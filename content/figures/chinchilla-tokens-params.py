"""Tokens trained against parameters: the Chinchilla line and real models."""

from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "Training tokens against parameters (log-log). Grey diagonals are equal "
    "compute, C = 6·N·D; the blue line is 20 tokens per parameter, where each "
    "diagonal's compute-optimal model sits (Hoffmann et al., 2022)"
)
# (parameters, tokens) as published: Brown et al. 2020, Rae et al. 2021,
# Hoffmann et al. 2022, Meta's Llama 3 model card.
PUBLISHED = {
    "GPT-3 175B": (175e9, 300e9),
    "Gopher 280B": (280e9, 300e9),
    "Chinchilla 70B": (70e9, 1.4e12),
    "Llama 3 8B": (8.03e9, 15e12),
}
BUDGETS = [1e18, 1e20, 1e22, 1e24]  # FLOPs, one diagonal each


def draw(fig):
    ax = fig.add_subplot()
    n_range = [10 ** (7 + i / 10) for i in range(0, 56)]  # 10M .. 3.2T parameters
    for c in BUDGETS:
        pts = [(n, c / (6 * n)) for n in n_range if 1e8 <= c / (6 * n) <= 1e14]
        ax.plot(*zip(*pts, strict=True), color="#BBBBBB", lw=1)
        n_label, d_label = [p for p in pts if p[0] <= 3e12][-1]
        ax.annotate(f"C = {c:.0e} FLOPs", (n_label, d_label), xytext=(-4, 4),
                    textcoords="offset points", color="#666666", fontsize=8,
                    ha="right", va="bottom")  # fmt: skip
    ax.plot(n_range, [20 * n for n in n_range], color="#0072B2", lw=2,
            label="20 tokens per parameter")  # fmt: skip
    for name in ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"]:
        c = get_config(name)
        n = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
        ax.plot(n, 20 * n, "o", color="#0072B2")
        ax.annotate(name, (n, 20 * n), xytext=(6, -12), textcoords="offset points",
                    fontsize=8)  # fmt: skip
    for name, (n, d) in PUBLISHED.items():
        ax.plot(n, d, "D", color="#D55E00")
        ratio = d / n
        text = (
            f"{name}\n{ratio:,.1f} tokens/param"
            if ratio < 10
            else (f"{name}\n{ratio:,.0f} tokens/param")
        )
        below = name.startswith("GPT-3")  # GPT-3 and Gopher share D = 300B
        ax.annotate(text, (n, d), xytext=(-8, -16) if below else (8, 6),
                    textcoords="offset points", fontsize=8,
                    ha="right" if below else "left", va="center")  # fmt: skip
    ax.plot([], [], "D", color="#D55E00", label="published training runs")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(3e7, 3e12)
    ax.set_ylim(1e8, 1e14)
    ax.set_xlabel("parameters N")
    ax.set_ylabel("training tokens D")
    ax.legend(loc="upper left", frameon=True, framealpha=0.9)
    ax.grid(True, which="major", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
