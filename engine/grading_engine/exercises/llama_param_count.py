"""llama-param-count: parameters of a Llama-style model from its config.

A Llama-style block has grouped-query attention (q and o are d x heads·head_dim,
k and v only d x kv_heads·head_dim), a three-matrix SwiGLU MLP (gate, up,
down), two RMSNorms with a weight only, and no biases; the model adds an
embedding, a final RMSNorm and a head that is tied or not. Shapes of real
published configs are the public cases.
"""

from __future__ import annotations

import random

from grading_engine.checks.compared import int_compared
from grading_engine.harness.capture import capture_int

SLUG = "llama-param-count"
ENTRY_POINT = "llama_param_count"
SIGNATURE = "llama_param_count(config: dict) -> int"
KEYS = (
    "vocab_size",
    "hidden_size",
    "num_hidden_layers",
    "intermediate_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "tie_word_embeddings",
)
# Shapes from the models' published config.json files.
PUBLISHED = {
    "Llama 3.2 1B": (128256, 2048, 16, 8192, 32, 8, 64, True),
    "Llama 3.2 3B": (128256, 3072, 28, 8192, 24, 8, 128, True),
    "Llama 3.1 8B": (128256, 4096, 32, 14336, 32, 8, 128, False),
}


def config_of(shape: tuple) -> dict:
    return dict(zip(KEYS, shape, strict=True))


def _parts(c: dict) -> dict[str, int]:
    d, hd = c["hidden_size"], c["head_dim"]
    return {
        "qo": 2 * d * c["num_attention_heads"] * hd,
        "kv": 2 * d * c["num_key_value_heads"] * hd,
        "kv_full": 2 * d * c["num_attention_heads"] * hd,
        "mlp": 3 * d * c["intermediate_size"],
        "norms": 2 * d,
        "table": c["vocab_size"] * d,
        "final_norm": d,
    }


def reference(config: dict) -> int:
    p = _parts(config)
    blocks = config["num_hidden_layers"] * (p["qo"] + p["kv"] + p["mlp"] + p["norms"])
    tables = p["table"] * (1 if config["tie_word_embeddings"] else 2)
    return blocks + tables + p["final_norm"]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": name, "hidden": name != "Llama 3.2 1B", "config": config_of(shape)}
        for name, shape in PUBLISHED.items()
    ]
    # Attention wider than hidden_size in every draw, with fixed values
    # (Gemma 7B's widths: 16 heads of 256 on a 3,072 residual), so deriving
    # head_dim fails on every seed, not only where a drawn config catches it.
    cases.append(
        {
            "name": "hidden: 16 heads x 256 on a 3,072-wide residual",
            "hidden": True,
            "config": config_of((256000, 3072, 28, 24576, 16, 16, 256, True)),
        }
    )
    for i in range(4):
        kv_heads = rng.choice([1, 2, 4, 8])
        heads = kv_heads * rng.randint(1, 8)
        head_dim = rng.choice([32, 64, 128])
        hidden = rng.choice([heads * head_dim, 64 * rng.randint(4, 80)])
        while i == 1 and hidden == heads * head_dim:
            # One config in every draw where the attention width is not
            # hidden_size (as in Gemma 7B): head_dim must be read, not derived.
            hidden = 64 * rng.randint(4, 80)
        shape = (
            rng.randint(1000, 260_000),
            hidden,
            rng.randint(2, 60),
            64 * rng.randint(8, 300),
            heads,
            kv_heads,
            head_dim,
            i % 2 == 0,
        )
        cases.append(
            {
                "name": f"random config {i + 1}",
                "hidden": True,
                "config": config_of(shape),
            }
        )
    return cases


def run_case(fn, case: dict):
    return {"result": capture_int(fn(dict(case["config"])))}, {}


def _head_dim_from_hidden(config: dict) -> list[int]:
    """The count with head_dim taken as hidden_size // num_attention_heads,
    written either way: q_proj and o_proj from that head_dim, or square
    (d x d, as heads * head_dim = d would make them)."""
    d = config["hidden_size"]
    derived = d // config["num_attention_heads"]
    from_heads = reference({**config, "head_dim": derived})
    qo = _parts({**config, "head_dim": derived})["qo"]
    square = from_heads + config["num_hidden_layers"] * (2 * d * d - qo)
    return sorted({from_heads, square})


def _head_slip(table: int, right: int, tied: bool) -> tuple[int, str, str]:
    """The head miscounted for this config's flag: one table too many when
    tied, one too few when untied.

    Each is listed only on the configs where it changes the count, so the
    three ways to get the head wrong are each named by what they did: a head
    counted whatever the flag (tied configs wrong), a head left out whatever
    the flag (untied configs wrong), and the flag read backwards (both).
    """
    if tied:
        return (
            right + table,
            "counted-head-twice",
            "tie_word_embeddings is true here: the head reuses the embedding "
            "matrix, so count the vocab_size x hidden_size table once",
        )
    return (
        right - table,
        "forgot-untied-head",
        "tie_word_embeddings is false here: the head is its own vocab_size x "
        "hidden_size matrix, a second table to count",
    )


def _slips(config: dict) -> list[tuple[int, str, str]]:
    p = _parts(config)
    L = config["num_hidden_layers"]
    tied = config["tie_word_embeddings"]
    right = reference(config)
    return [
        (
            right + L * (p["kv_full"] - p["kv"]),
            "forgot-gqa",
            "k_proj and v_proj map to num_key_value_heads * head_dim, not to "
            "num_attention_heads * head_dim: grouped-query attention shares them",
        ),
        *(
            (
                value,
                "head-dim-from-hidden",
                "q_proj and o_proj are hidden_size x num_attention_heads * "
                "head_dim, and k_proj and v_proj use head_dim too: read "
                "head_dim from the config, since heads * head_dim need not "
                "equal hidden_size",
            )
            for value in _head_dim_from_hidden(config)
        ),
        (
            right - L * p["qo"] // 2,
            "forgot-q-or-o-proj",
            "that leaves one hidden_size x num_attention_heads * head_dim "
            "matrix out of each block: attention has two of them, q_proj and "
            "o_proj (the output projection back to hidden_size)",
        ),
        (
            right - L * p["mlp"] // 3,
            "two-matrix-mlp",
            "a SwiGLU MLP has three matrices (gate_proj, up_proj, down_proj), "
            "each hidden_size x intermediate_size",
        ),
        _head_slip(p["table"], right, tied),
        (
            right - L * p["norms"] - p["final_norm"],
            "forgot-norms",
            "each block has two RMSNorm weights of hidden_size, and there is a "
            "final norm",
        ),
        (
            right + L * p["norms"] + p["final_norm"],
            "norms-with-bias",
            "RMSNorm has a weight but no bias (unlike LayerNorm)",
        ),
    ]


check_case = int_compared("parameters", args=lambda case: case["config"])
