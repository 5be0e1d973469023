"""KV cache against weight memory as the context grows, one sequence in bf16."""

from grading_engine.exercises.kv_crossover_tokens import reference
from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "One sequence in bf16: the KV cache (rising lines) against the weights "
    "(flat lines); dots mark where the cache catches up"
)
# (label, parameters, layers, kv heads, head dim, colour); Llama from its config.
MODELS = [
    ("GPT-2 small", "gpt2", "#0072B2"),
    ("GPT-2 xl", "gpt2-xl", "#009E73"),
    ("Llama 3.1 8B", (8_030_261_248, 32, 8, 128), "#D55E00"),
]


def _shape(spec):
    if isinstance(spec, tuple):
        return spec
    c = get_config(spec)
    n = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
    return n, c.n_layer, c.n_head, c.n_embd // c.n_head


def draw(fig):
    ax = fig.add_subplot()
    contexts = [2**k for k in range(8, 18)]  # 256 .. 131,072 tokens
    for label, spec, colour in MODELS:
        n, layers, kv_heads, head_dim = _shape(spec)
        per_token = 2 * layers * kv_heads * head_dim * 2
        ax.plot(
            contexts,
            [t * per_token / 1e9 for t in contexts],
            color=colour,
            label=f"{label} cache",
        )
        ax.axhline(2 * n / 1e9, color=colour, linestyle="--", linewidth=1)
        cross = reference(n, layers, kv_heads, head_dim, 1, 2, 2)
        ax.plot([cross], [cross * per_token / 1e9], "o", color=colour)
        ax.annotate(
            f"{cross:,} tokens",
            (cross, cross * per_token / 1e9),
            textcoords="offset points",
            xytext=(-70, 8),
            fontsize=8,
        )
    limit = get_config("gpt2").block_size
    ax.axvline(limit, color="grey", linestyle=":", linewidth=1)
    ax.annotate(
        f"GPT-2's {limit:,}-token limit:\nits lines beyond are hypothetical",
        (limit, 0.02),
        textcoords="offset points",
        xytext=(4, 0),
        fontsize=8,
        color="dimgrey",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(contexts[::2], [f"{t:,}" for t in contexts[::2]])
    ax.set_xlabel("context length (tokens, one sequence)")
    ax.set_ylabel("GB (bf16); dashed: weights")
    ax.legend(frameon=False, loc="lower right")
    ax.spines[["top", "right"]].set_visible(False)
