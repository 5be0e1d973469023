"""Embedding share against model size, GPT-2 and modern open models."""

from grading_engine.exercises.llama_param_count import PUBLISHED, config_of, reference
from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "Share of parameters in the embedding tables against total size: GPT-2's "
    "share falls with size; 128K-token vocabularies lift small modern models"
)


def _gpt2_points():
    points = []
    for name in ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"]:
        c = get_config(name)
        n = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
        points.append((name, n, c.vocab_size * c.n_embd / n))
    return points


def _llama_points():
    points = []
    for name, shape in PUBLISHED.items():
        config = config_of(shape)
        n = reference(config)
        tables = config["vocab_size"] * config["hidden_size"]
        tables *= 1 if config["tie_word_embeddings"] else 2
        points.append((name, n, tables / n))
    return points


def draw(fig):
    ax = fig.add_subplot()
    for points, colour, marker, label in [
        (_gpt2_points(), "#0072B2", "o", "GPT-2 (V = 50,257, tied)"),
        (
            _llama_points(),
            "#D55E00",
            "s",
            "Llama 3.x (V = 128,256; 1B, 3B tied, 8B untied)",
        ),
    ]:
        xs = [n / 1e9 for _, n, _ in points]
        ys = [100 * share for _, _, share in points]
        ax.plot(xs, ys, marker=marker, color=colour, label=label)
        for (name, _, share), x in zip(points, xs, strict=True):
            ax.annotate(
                f"{name} {share:.1%}",
                (x, 100 * share),
                textcoords="offset points",
                xytext=(6, -14) if name.endswith("3B") else (6, 6),
                fontsize=8,
            )
    ax.set_xscale("log")
    ticks = [0.1, 0.3, 1, 3, 10]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlim(0.08, 25)
    ax.set_xlabel("total parameters (billions, log scale)")
    ax.set_ylabel("embedding tables (% of parameters)")
    ax.set_ylim(0, 36)
    ax.legend(frameon=False, loc="upper right")
    ax.spines[["top", "right"]].set_visible(False)
