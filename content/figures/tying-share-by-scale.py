"""What one vocabulary matrix costs as models grow, and who ties.

Parameter counts are computed from the published Hugging Face configs
(vocab_size, hidden_size, num_hidden_layers, intermediate_size, attention
and key/value heads, head_dim, tie_word_embeddings) with the same formula as
the lessons; GPT-2 sizes come from the reference configs.
"""

from grading_engine.reference import get_config, gpt2_parameter_count

CAPTION = (
    "One V x d matrix as a share of the whole model, from published configs: "
    "small models, where it is a fifth or more, tie; the 8B+ models untie; "
    "GPT-2 tied at every size"
)

# name: (V, d, layers, ffn, q heads, kv heads, head_dim, tied, qk_norm)
# Sources: the config.json of each model on Hugging Face (meta-llama/*,
# Qwen/Qwen3-*).
DECODERS = {
    "Qwen3 0.6B": (151936, 1024, 28, 3072, 16, 8, 128, True, True),
    "Qwen3 1.7B": (151936, 2048, 28, 6144, 16, 8, 128, True, True),
    "Llama 3.2 1B": (128256, 2048, 16, 8192, 32, 8, 64, True, False),
    "Llama 3.2 3B": (128256, 3072, 28, 8192, 24, 8, 128, True, False),
    "Qwen3 4B": (151936, 2560, 36, 9728, 32, 8, 128, True, True),
    "Llama 3.1 8B": (128256, 4096, 32, 14336, 32, 8, 128, False, False),
    "Qwen3 8B": (151936, 4096, 36, 12288, 32, 8, 128, False, True),
    "Qwen3 14B": (151936, 5120, 40, 17408, 40, 8, 128, False, True),
    "Llama 3.1 70B": (128256, 8192, 80, 28672, 64, 8, 128, False, False),
}


def decoder_params(V, d, L, ffn, n_q, n_kv, hd, tied, qk_norm=False):
    """Llama/Qwen3-style decoder: GQA, SwiGLU MLP, RMSNorm, no biases."""
    attn = 2 * d * n_q * hd + 2 * d * n_kv * hd
    mlp = 3 * d * ffn
    norms = 2 * d + (2 * hd if qk_norm else 0)
    return V * d * (1 if tied else 2) + L * (attn + mlp + norms) + d


def points():
    rows = []
    for name in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"):
        c = get_config(name)
        total = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
        label = "GPT-2 " + (name.split("-")[1] if "-" in name else "small")
        rows.append((label, total, c.vocab_size * c.n_embd / total, True, "GPT-2"))
    for name, cfg in DECODERS.items():
        total = decoder_params(*cfg)
        family = name.split()[0]
        rows.append((name, total, cfg[0] * cfg[1] / total, cfg[7], family))
    return rows


def draw(fig):
    ax = fig.add_subplot()
    colours = {"GPT-2": "#999999", "Llama": "#0072b2", "Qwen3": "#d55e00"}
    markers = {"GPT-2": "^", "Llama": "o", "Qwen3": "s"}
    for name, total, share, tied, family in points():
        ax.scatter(
            total / 1e9,
            100 * share,
            s=60,
            marker=markers[family],
            color=colours[family] if tied else "white",
            edgecolors=colours[family],
            linewidths=1.8,
        )
        # Llama 3.1 8B sits between Qwen3 8B and Qwen3 14B: label it on the left.
        left = name == "Llama 3.1 8B"
        ax.annotate(
            name,
            (total / 1e9, 100 * share),
            xytext=(-7, -3) if left else (6, 3),
            textcoords="offset points",
            ha="right" if left else "left",
            fontsize=7.5,
        )
    ax.set_xscale("log")
    ax.set_xlabel("total parameters (billions, log scale)")
    ax.set_ylabel("one V x d matrix, % of all parameters")
    ax.set_ylim(0, 35)
    ax.set_xlim(0.08, 150)
    ax.scatter([], [], color="#555555", label="tied (filled)")
    ax.scatter([], [], color="white", edgecolors="#555555", label="untied (hollow)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title("The saving from tying shrinks with scale")
    ax.spines[["top", "right"]].set_visible(False)
