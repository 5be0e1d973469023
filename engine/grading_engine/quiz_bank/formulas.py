"""Closed forms of GPT-2's sizes and costs, in plain integers (no torch).

The same formulas as grading_engine.reference.counts and the lessons
(parameter-formula, kv-cache-vs-weights, flops-per-token); the template
tests check each against the reference model built on the meta device.
"""

from __future__ import annotations

import math


def block_params(d: int) -> int:
    """One block: attention 4d^2 + 4d, MLP 8d^2 + 5d, two LayerNorms 4d."""
    return 12 * d * d + 13 * d


def gpt2_params(
    vocab_size: int, block_size: int, n_layer: int, n_embd: int, tied: bool = True
) -> int:
    """wte + wpe + blocks + ln_f (+ an untied head)."""
    d = n_embd
    head = 0 if tied else vocab_size * d
    return vocab_size * d + block_size * d + n_layer * block_params(d) + 2 * d + head


# Bytes per element of the dtypes templates name (torch's names).
BYTES_PER_ELEMENT = {
    "float32": 4,
    "float16": 2,
    "bfloat16": 2,
    "int8": 1,
}


def round_up(n: int, multiple: int) -> int:
    """The smallest multiple of `multiple` at or above n."""
    return -(-n // multiple) * multiple


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def embedding_params(vocab_size: int, block_size: int, n_embd: int) -> int:
    """wte (V x d) plus wpe (T x d)."""
    return (vocab_size + block_size) * n_embd


def attention_params(d: int) -> int:
    """c_attn (d -> 3d) and c_proj (d -> d), weights and biases: 4d^2 + 4d."""
    return 4 * d * d + 4 * d


def mlp_params(d: int, hidden: int) -> int:
    """c_fc (d -> hidden) and c_proj (hidden -> d), weights and biases."""
    return 2 * d * hidden + hidden + d


def layernorm_params(n_layer: int, d: int) -> int:
    """Two LayerNorms per block and ln_f, each a weight and a bias of d."""
    return (2 * n_layer + 1) * 2 * d


def linear_weight_params(n_layer: int, d: int) -> int:
    """The four Linear weights of every block: 12 L d^2."""
    return 12 * n_layer * d * d


def bias_params(n_layer: int, d: int) -> int:
    """The four Linear biases of every block: 3d + d + 4d + d = 9d each."""
    return 9 * n_layer * d


def kv_cache_bytes(
    n_layer: int, kv_width: int, tokens: int, batch: int, bytes_per_element: int
) -> int:
    """One key and one value of kv_width numbers per layer, token and sequence."""
    return 2 * n_layer * kv_width * tokens * batch * bytes_per_element


def attention_product_flops(n_layer: int, n_embd: int, t: int) -> int:
    """q k^T and weights @ v over the full t x t matrix, per token: 4 L t d."""
    return 4 * n_layer * t * n_embd


def forward_flops_per_token(vocab_size: int, n_layer: int, n_embd: int, t: int) -> int:
    """2 (12 L d^2 + V d) for the matrices, plus the attention products."""
    d = n_embd
    weights = 2 * (12 * n_layer * d * d + vocab_size * d)
    return weights + attention_product_flops(n_layer, d, t)


def block_activation_bytes(b: int, t: int, n_embd: int, n_head: int) -> int:
    """What one block saves for backward in fp32 (lesson activation-memory):
    (16 d + 4) floats per token, n_head t^2 softmax floats per sequence and a
    (t, t) bool mask shared by the batch."""
    return b * t * (64 * n_embd + 16) + 4 * b * n_head * t * t + t * t


def cosine_lr(it: int, peak: float, min_lr: float, warmup: int, decay: int) -> float:
    """nanoGPT's get_lr: linear warmup, half cosine to min_lr, then min_lr."""
    if it < warmup:
        return peak * (it + 1) / (warmup + 1)
    if it > decay:
        return min_lr
    ratio = (it - warmup) / (decay - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (peak - min_lr)


def train_hours(n_params: float, n_tokens: float, peak: float, mfu: float, gpus: int):
    """6 N D FLOPs at gpus x peak x MFU FLOP/s, in hours."""
    return 6 * n_params * n_tokens / (gpus * peak * mfu) / 3600


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
