"""kv-cache-bytes: memory of the keys and values cached during generation.

Every layer caches a key and a value vector of n_embd numbers for every
position of every sequence: 2 * n_layer * batch * seq_len * n_embd elements.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import int_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_int

SLUG = "kv-cache-bytes"
ENTRY_POINT = "kv_cache_bytes"
SIGNATURE = (
    "kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element) -> int"
)

_ARGS = ("n_layer", "n_embd", "seq_len", "batch_size", "bytes_per_element")


def reference(n_layer, n_embd, seq_len, batch_size, bytes_per_element) -> int:
    return 2 * n_layer * batch_size * seq_len * n_embd * bytes_per_element


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case(
            "gpt2 fp32, one sequence of 1,024",
            False,
            "gpt2",
            seq_len=1024,
            batch_size=1,
            bytes_per_element=4,
        ),
        _case(
            "gpt2-medium fp16, batch of 8",
            False,
            "gpt2-medium",
            seq_len=512,
            batch_size=8,
            bytes_per_element=2,
        ),
        _case(
            "gpt2-xl bf16, batch of 4",
            True,
            "gpt2-xl",
            seq_len=1024,
            batch_size=4,
            bytes_per_element=2,
        ),
        _case("tiny int8", True, "tiny", seq_len=16, batch_size=3, bytes_per_element=1),
    ]
    for i in range(3):
        cases.append(
            _case(
                f"random shape {i + 1}",
                True,
                n_layer=rng.randint(3, 60),
                n_embd=64 * rng.randint(2, 40),
                seq_len=rng.randint(17, 8192),
                batch_size=rng.randint(2, 64),
                bytes_per_element=rng.choice([2, 4, 8]),
            )
        )
    return cases


run_case = returns_int(_ARGS)


def _slips(args: dict) -> list[tuple[int, str, str]]:
    expected = reference(**args)
    return [
        (
            expected // 2,
            "forgot-k-or-v",
            "that is half the answer: every layer caches both a key AND a value",
        ),
        (
            expected // args["bytes_per_element"],
            "counted-elements",
            "that is the number of elements; multiply by bytes_per_element for bytes",
        ),
        (
            expected // args["n_layer"],
            "forgot-layers",
            "that is one layer's cache; every layer keeps its own keys and values",
        ),
        (
            expected // args["n_layer"] * (args["n_layer"] - 1),
            "one-layer-short",
            "that is the cache of n_layer - 1 layers: a loop such as "
            "range(1, n_layer) leaves one out; range(n_layer) visits every "
            "layer, and each keeps its own keys and values",
        ),
        (
            expected // args["batch_size"],
            "forgot-batch",
            "that is one sequence's cache; each sequence in the batch has its own",
        ),
        (
            expected // 2 * 3,
            "cached-queries",
            "that caches three vectors per position, queries too; only keys "
            "and values are reused by later tokens (a query is used once, by "
            "its own step), so the cache holds 2 vectors per position per layer",
        ),
        (
            expected * 8,
            "bits-not-bytes",
            "that is in bits; the answer is in bytes",
        ),
        *(
            [
                (
                    expected // args["bytes_per_element"] * 4,
                    "fixed-bytes-per-element",
                    "that is the size at 4 bytes per element (float32) whatever "
                    "the precision: multiply by bytes_per_element, the size of "
                    "one cached number in this dtype",
                )
            ]
            if args["bytes_per_element"] != 4  # else it is the answer
            else []
        ),
    ]


check_case = int_compared("bytes")
