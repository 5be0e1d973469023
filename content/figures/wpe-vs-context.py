"""What a longer context costs GPT-2 small: the position table vs attention scores."""

from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "Growing GPT-2 small's context: the position table `wpe` adds T x 768 "
    "parameters (linear), while one layer's attention scores for one sequence "
    "take n_head x T x T floats (quadratic)"
)

_LENGTHS = [256, 512, 1024, 2048, 4096, 8192]


def draw(fig):
    c = get_config("gpt2")
    base = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
    table_mb = []
    score_mb = []
    for T in _LENGTHS:
        total = gpt2_parameter_count(c.vocab_size, T, c.n_embd, c.n_layer)
        wpe = total - (base - c.block_size * c.n_embd)  # what the table holds at T
        table_mb.append(wpe * 4 / 1e6)
        score_mb.append(c.n_head * T * T * 4 / 1e6)  # fp32, one layer, batch 1

    ax = fig.add_subplot()
    ax.plot(_LENGTHS, table_mb, "o-", color="#0072B2", label="wpe table, fp32")
    ax.plot(
        _LENGTHS,
        score_mb,
        "s--",
        color="#D55E00",
        label=f"attention scores, one layer ({c.n_head} heads), fp32",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(_LENGTHS, [f"{T:,}" for T in _LENGTHS])
    ax.axvline(c.block_size, color="#555555", lw=1, ls=":")
    ax.text(
        c.block_size * 1.05,
        max(score_mb) / 3,
        f"GPT-2: {c.block_size:,} rows",
        color="#333333",
    )
    for T, a, s in zip(_LENGTHS, table_mb, score_mb, strict=True):
        if T in (1024, 8192):
            ax.annotate(
                f"{a:.1f} MB",
                (T, a),
                textcoords="offset points",
                xytext=(-8, 8),
                ha="right",
            )
            ax.annotate(
                f"{s:,.0f} MB",
                (T, s),
                textcoords="offset points",
                xytext=(-8, 8),
                ha="right",
            )
    ax.set_xlabel("context length T (tokens)")
    ax.set_ylabel("memory (MB, log scale)")
    ax.set_title("Context length: the table grows like T, attention like T²")
    ax.legend(loc="upper left", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
