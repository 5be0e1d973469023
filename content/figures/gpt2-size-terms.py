"""GPT-2's four sizes split into the terms of the parameter formula."""

from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "Parameters of the four GPT-2 sizes by formula term: the 12·L·d² block "
    "matrices take over as the models grow"
)
SIZES = ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"]
# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
TERMS = [
    ("embeddings (V+T)·d", "#0072B2"),
    ("block matrices 12·L·d²", "#E69F00"),
    ("biases and norms 13·L·d + 2d", "#009E73"),
]


def _terms(name):
    c = get_config(name)
    V, T, d, L = c.vocab_size, c.block_size, c.n_embd, c.n_layer
    values = [(V + T) * d, 12 * L * d * d, 13 * L * d + 2 * d]
    assert sum(values) == gpt2_parameter_count(V, T, d, L)
    return values


def draw(fig):
    ax = fig.add_subplot()
    rows = [_terms(name) for name in SIZES]
    left = [0.0] * len(SIZES)
    for index, (label, colour) in enumerate(TERMS):
        widths = [row[index] / 1e6 for row in rows]
        ax.barh(SIZES, widths, left=left, label=label, color=colour)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    for y, row in enumerate(rows):
        total = sum(row)
        ax.text(
            total / 1e6 + 15,
            y,
            f"{total / 1e6:,.1f}M  (blocks {row[1] / total:.0%})",
            va="center",
        )
    ax.invert_yaxis()
    ax.set_xlabel("parameters (millions, tied head)")
    ax.set_xlim(0, max(left) * 1.35)
    ax.legend(loc="upper right", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
