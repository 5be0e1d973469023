"""int8-weight-bytes: memory of GPT-2 with its block Linears in int8.

The usual weight-only scheme: each block's four Linear weight matrices in
int8 with one fp32 scale per output row, everything else (embeddings,
biases, LayerNorms) kept in bf16.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import int_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_int
from grading_engine.reference import gpt2_parameter_count

SLUG = "int8-weight-bytes"
ENTRY_POINT = "int8_weight_bytes"
SIGNATURE = "int8_weight_bytes(vocab_size, block_size, n_embd, n_layer) -> int"
_ARGS = ("vocab_size", "block_size", "n_embd", "n_layer")


def _parts(vocab_size, block_size, n_embd, n_layer) -> dict[str, int]:
    d, L = n_embd, n_layer
    total = gpt2_parameter_count(vocab_size, block_size, d, L)
    linear = L * 12 * d * d  # c_attn 3d^2, c_proj d^2, c_fc 4d^2, c_proj 4d^2
    return {
        "linear": linear,
        "rows": L * 9 * d,  # output rows: 3d + d + 4d + d
        "columns": L * 7 * d,  # input columns: d + d + d + 4d
        "matrices": L * 4,
        "rest": total - linear,
        "wpe": block_size * d,
        "wte": vocab_size * d,
    }


def reference(vocab_size, block_size, n_embd, n_layer) -> int:
    p = _parts(vocab_size, block_size, n_embd, n_layer)
    return p["linear"] + 4 * p["rows"] + 2 * p["rest"]


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case("gpt2", False, "gpt2"),
        _case("tiny", False, "tiny"),
        _case("gpt2-medium", True, "gpt2-medium"),
        _case("gpt2-xl", True, "gpt2-xl"),
    ]
    for i in range(3):
        cases.append(
            _case(
                f"random model {i + 1}",
                True,
                vocab_size=rng.randint(1000, 260_000),
                block_size=rng.choice([128, 512, 2048, 8192]),
                n_embd=64 * rng.randint(2, 48),
                n_layer=rng.randint(2, 60),
            )
        )
    return cases


run_case = returns_int(_ARGS)


def _slips(args: dict) -> list[tuple[int, str, str]]:
    p = _parts(**args)
    total = p["linear"] + p["rest"]
    right = reference(**args)
    return [
        (
            p["linear"] + 2 * p["rest"],
            "forgot-scales",
            "int8 values need their scales to be read back: one fp32 number "
            "(4 bytes) per output row of each quantized matrix",
        ),
        (
            p["linear"] + 4 * p["matrices"] + 2 * p["rest"],
            "scale-per-matrix",
            "the scheme keeps one scale per output ROW, not one per matrix",
        ),
        (
            p["linear"] + 4 * p["columns"] + 2 * p["rest"],
            "scales-per-input",
            "a scale belongs to an output row of the (out, in) weight: c_attn "
            "has 3d rows, c_fc 4d, the two c_proj d each, 9d per block",
        ),
        (
            p["linear"] + 2 * p["rows"] + 2 * p["rest"],
            "scales-in-bf16",
            "the scales are fp32, 4 bytes each, not bf16 like the rest: one "
            "per output row, 9d per block",
        ),
        (
            p["linear"] + 4 * p["rows"] + 4 * p["rest"],
            "rest-in-fp32",
            "what is not quantized stays in bf16: 2 bytes, not 4",
        ),
        (
            total + 4 * p["rows"],
            "quantized-everything",
            "only the block Linear weights are int8; embeddings, biases and "
            "LayerNorms stay in bf16",
        ),
        (
            right - 2 * p["wpe"],
            "forgot-position-embedding",
            "the position table wpe (block_size x n_embd) is a parameter too: "
            "it stays in bf16, 2 bytes per entry",
        ),
        (
            # the tied table in int8 (1 byte) with a 4-byte scale per vocab row
            right - p["wte"] + 4 * args["vocab_size"],
            "quantized-tied-head",
            "the tied head is the wte table, which the recipe keeps in bf16 (2 "
            "bytes per entry, no scales): only the four Linears inside each "
            "block are int8",
        ),
    ]


check_case = int_compared("bytes")
