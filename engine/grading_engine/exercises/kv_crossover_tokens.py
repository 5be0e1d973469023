"""kv-crossover-tokens: the context at which the KV cache outgrows the weights.

Weights cost n_params x weight bytes once; the cache costs
batch x 2 x n_layer x n_kv_heads x head_dim x cache bytes per token. The
answer is the smallest whole number of tokens where cache >= weights.
Every draw has a model whose weights are exactly a whole number of tokens'
caches, and the same model with one parameter fewer and one more: one such
random triple and one fixed ("fixed model: ...", GPT-2 medium's shape).
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import int_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_int

SLUG = "kv-crossover-tokens"
ENTRY_POINT = "kv_crossover_tokens"
SIGNATURE = (
    "kv_crossover_tokens(n_params, n_layer, n_kv_heads, head_dim, batch_size, "
    "weight_bytes, cache_bytes) -> int"
)
_ARGS = ("n_params", "n_layer", "n_kv_heads", "head_dim", "batch_size",
         "weight_bytes", "cache_bytes")  # fmt: skip


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def reference(n_params, n_layer, n_kv_heads, head_dim, batch_size, weight_bytes,
              cache_bytes) -> int:  # fmt: skip
    per_token = batch_size * 2 * n_layer * n_kv_heads * head_dim * cache_bytes
    return _ceil_div(n_params * weight_bytes, per_token)


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case("GPT-2 small, bf16, one sequence", False, n_params=124_439_808,
              n_layer=12, n_kv_heads=12, head_dim=64, batch_size=1,
              weight_bytes=2, cache_bytes=2),
        _case("Llama 3.1 8B, bf16, batch 8", False, n_params=8_030_261_248,
              n_layer=32, n_kv_heads=8, head_dim=128, batch_size=8,
              weight_bytes=2, cache_bytes=2),
        _case("GPT-2 xl, int8 weights, fp16 cache, batch 4", True,
              n_params=1_557_611_200, n_layer=48, n_kv_heads=25, head_dim=64,
              batch_size=4, weight_bytes=1, cache_bytes=2),
    ]  # fmt: skip
    for i in range(4):
        cases.append(
            _case(f"random model {i + 1}", True, n_params=rng.randint(10**7, 10**11),
                  **_random_shape(rng))
        )  # fmt: skip
    # A fixed triple too, so every draw catches "cache > weights" with the
    # same values: GPT-2 medium's shape at batch 4 in bf16, whose weights
    # (354,877,440 parameters) equal the caches at 1,805 tokens.
    fixed = _boundary_triple("fixed model: ", _FIXED, 1805 * 196_608)
    return cases + _boundary_cases(rng) + fixed


def _random_shape(rng: random.Random) -> dict:
    return {
        "n_layer": rng.randint(4, 96),
        "n_kv_heads": rng.choice([1, 2, 4, 8, 16]),
        "head_dim": rng.choice([64, 96, 128]),
        "batch_size": rng.randint(2, 64),
        "weight_bytes": rng.choice([1, 2, 4]),
        "cache_bytes": rng.choice([1, 2]),
    }


def _boundary_cases(rng: random.Random) -> list[dict]:
    """One random model whose weights are a whole number of tokens' caches
    (cache == weights at the answer: "at least" stops there, "more than"
    one token later), then one parameter fewer and one more (the answer
    rounds up). Every draw has all three."""
    shape = _random_shape(rng)
    per_token = _per_token(shape)
    k = max(rng.randint(10**7, 10**11) // per_token, 3)
    return _boundary_triple("", shape, k * per_token)


def _per_token(shape: dict) -> int:
    """Cache bytes a token, the whole batch."""
    return (shape["batch_size"] * 2 * shape["n_layer"] * shape["n_kv_heads"]
            * shape["head_dim"] * shape["cache_bytes"])  # fmt: skip


# 393,216 cache bytes a token: the weights of 196,608 bf16 parameters.
_FIXED = {"n_layer": 24, "n_kv_heads": 16, "head_dim": 64, "batch_size": 4,
          "weight_bytes": 2, "cache_bytes": 2}  # fmt: skip


def _boundary_triple(prefix: str, shape: dict, n_params: int) -> list[dict]:
    """`n_params` (weights a whole number of tokens' caches), then one
    parameter fewer and one more."""
    return [
        _case(f"{prefix}caches equal the weights at a whole token{label}", True,
              n_params=n_params + delta, **shape)
        for label, delta in (("", 0), (", one parameter fewer", -1),
                             (", one parameter more", 1))
    ]  # fmt: skip


run_case = returns_int(_ARGS)


def _slips(a: dict) -> list[tuple[int, str, str]]:
    weights = a["n_params"] * a["weight_bytes"]
    per_seq = 2 * a["n_layer"] * a["n_kv_heads"] * a["head_dim"] * a["cache_bytes"]
    slips = [
        (
            _ceil_div(weights, a["batch_size"] * per_seq // a["n_layer"]),
            "forgot-layers",
            "every layer caches its own keys and values: the cache per token "
            "is n_layer times one layer's",
        ),
        (
            _ceil_div(weights, a["batch_size"] * per_seq // 2),
            "forgot-k-or-v",
            "every layer caches a key AND a value per token",
        ),
        (
            _ceil_div(weights, per_seq),
            "forgot-batch",
            "each sequence in the batch has its own cache; the weights are shared",
        ),
        (
            weights // (a["batch_size"] * per_seq),
            "rounded-down",
            "round up: the cache is smaller than the weights until the next "
            "whole token",
        ),
        (
            _ceil_div(a["n_params"], a["batch_size"] * per_seq // a["cache_bytes"]),
            "ignored-bytes",
            "compare bytes with bytes: weights and cache may use different dtypes",
        ),
    ]
    if a["weight_bytes"] != a["cache_bytes"]:  # else the swap is the answer
        elements = a["batch_size"] * per_seq // a["cache_bytes"]
        slips.append(
            (
                _ceil_div(
                    a["n_params"] * a["cache_bytes"], elements * a["weight_bytes"]
                ),
                "swapped-byte-widths",
                "that prices the weights at cache_bytes and the cache at "
                "weight_bytes: each side takes its own dtype, n_params x "
                "weight_bytes for the weights and cache_bytes for each cached "
                "number",
            )
        )
    if weights % (a["batch_size"] * per_seq) == 0:
        slips.append(
            (
                weights // (a["batch_size"] * per_seq) + 1,
                "crossover-strict",
                "at this many tokens the caches take exactly as many bytes as "
                "the weights, which is already 'at least as many': the "
                "boundary counts (cache >= weights, not cache > weights)",
            )
        )
    return slips


check_case = int_compared("tokens")
