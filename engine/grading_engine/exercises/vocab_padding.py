"""vocab-padding: round a vocabulary up to a multiple and price the extra rows.

Returns (padded vocabulary size, extra parameters, extra bytes). The extra
rows live in `wte` and, when the head is untied, again in `lm_head`. Cases
include a vocabulary that is already a multiple, where nothing is added.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.values import exact_int
from grading_engine.exercises.kit.args import args_case, call_with_args
from grading_engine.expected import expectation
from grading_engine.harness.capture import as_items, capture_int, safe_repr, type_name

SLUG = "vocab-padding"
ENTRY_POINT = "vocab_padding"
SIGNATURE = (
    "vocab_padding(vocab_size, multiple, n_embd, tied, bytes_per_element)"
    " -> tuple[int, int, int]"
)

_ARGS = ("vocab_size", "multiple", "n_embd", "tied", "bytes_per_element")
_PARTS = ("padded vocab_size", "extra parameters", "extra bytes")


def reference(vocab_size, multiple, n_embd, tied, bytes_per_element):
    padded = -(-vocab_size // multiple) * multiple  # ceiling division
    extra_params = (padded - vocab_size) * n_embd * (1 if tied else 2)
    return padded, extra_params, extra_params * bytes_per_element


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case(
            "GPT-2 small to a multiple of 64, tied, fp32",
            False,
            vocab_size=50257,
            multiple=64,
            n_embd=768,
            tied=True,
            bytes_per_element=4,
        ),
        _case(
            "Pythia's tokenizer, 4-way tensor parallel, untied, bf16",
            False,
            vocab_size=50277,
            multiple=512,
            n_embd=5120,
            tied=False,
            bytes_per_element=2,
        ),
        _case(
            "Llama 3's 128,256 to a multiple of 128 (already one)",
            True,
            vocab_size=128256,
            multiple=128,
            n_embd=4096,
            tied=False,
            bytes_per_element=2,
        ),
    ]
    # Every draw has a vocabulary already on a multiple, one just past one and
    # one just short of one, so rounding to the nearest multiple or adding a
    # block to an exact one fails on every attempt. The sizes stay random.
    for i, beyond in enumerate((0, 1, -1)):
        multiple = rng.choice([8, 64, 128, 256])
        vocab = multiple * rng.randint(100, 1000) + beyond
        cases.append(
            _case(
                f"random vocabulary {i + 1}",
                True,
                vocab_size=vocab,
                multiple=multiple,
                n_embd=64 * rng.randint(4, 64),
                tied=rng.choice([True, False]),
                bytes_per_element=rng.choice([1, 2, 4]),
            )
        )
    # Both kinds of head in the hidden set, whatever the seed drew.
    cases[-2]["args"]["tied"], cases[-1]["args"]["tied"] = True, False
    return cases


def run_case(fn, case: dict):
    result = call_with_args(fn, case, _ARGS)
    if found := as_items(result, 3):  # a namedtuple, a list or an array too
        return {"parts": [capture_int(v) for v in found[0]]}, {}
    return {"parts": None, "type": type_name(result), "repr": safe_repr(result)}, {}


def _slips(args: dict) -> list[tuple[tuple, str, str]]:
    v, m, d = args["vocab_size"], args["multiple"], args["n_embd"]
    heads = 1 if args["tied"] else 2
    nbytes = args["bytes_per_element"]
    right = reference(**args)
    over = (v // m + 1) * m
    down = (v // m) * m
    wrong_heads = 2 if args["tied"] else 1
    return [
        (
            (over, (over - v) * d * heads, (over - v) * d * heads * nbytes),
            "over-padded",
            f"{v:,} is already a multiple of {m}, and (v // m + 1) * m adds a "
            f"whole extra {m} rows; round up with ceiling division, "
            "-(-v // m) * m, which leaves an exact multiple alone",
        ),
        (
            (down, (down - v) * d * heads, (down - v) * d * heads * nbytes),
            "rounded-down",
            "that rounds down, which would cut real tokens off the table; "
            "padding rounds UP to the next multiple",
        ),
        (
            (
                right[0],
                right[1] // heads * wrong_heads,
                right[2] // heads * wrong_heads,
            ),
            "untied-head-ignored" if not args["tied"] else "tied-head-counted-twice",
            "an untied model pads two (vocab, n_embd) matrices, wte and lm_head, "
            "so the extra rows cost twice"
            if not args["tied"]
            else "the head is tied: wte and lm_head are one tensor, so the extra "
            "rows are paid for once",
        ),
        (
            (
                right[0],
                right[1] // d,
                right[1] // d * nbytes,
            ),
            "padding-rows-not-parameters",
            f"that counts padding rows, not parameters: each "
            f"padded row is a vector of n_embd = {d} numbers, so multiply the "
            "extra rows by n_embd",
        ),
        (
            (right[0], right[1], right[0] * d * heads * nbytes),
            "whole-table-bytes",
            "the third value is what the padding ADDS: the bytes of the extra "
            "parameters (the second value times bytes_per_element), not of "
            "the whole padded table",
        ),
        (
            (right[0], right[1], right[1]),
            "counted-elements",
            "the third value is the parameter count; multiply by "
            "bytes_per_element for bytes",
        ),
    ]


@expectation
def answer(case: dict) -> dict:
    """The three values and the known slips (shipped for the visible cases)."""
    args = case["args"]
    return {"value": reference(**args), "slips": _slips(args)}


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden = bool(case["hidden"])
    parts = data.get("parts")
    if not isinstance(parts, list) or len(parts) != 3:
        shown = str(data.get("repr", "?"))[:200]
        kind = str(data.get("type", "?"))[:200]
        return [
            fail(
                f"{case['name']}: result",
                f"expected a tuple of three ints (padded size, extra parameters, "
                f"extra bytes), got {shown} of type {kind}",
                expected="(int, int, int)",
                got=kind,
                diagnosis="not-a-triple",
                hidden=hidden,
            )
        ]
    shipped = answer(case)
    expected = shipped["value"]
    got = tuple(p.get("value") if isinstance(p, dict) else None for p in parts)
    slip = next((s for s in shipped["slips"] if s[0] == got and s[0] != expected), None)

    def diagnose(index):
        def inner(value):
            if slip and slip[0][index] == value and value != expected[index]:
                return slip[1], slip[2]
            return None

        return inner

    return [
        exact_int(
            f"{case['name']}: {label}",
            part,
            expected[i],
            hidden=hidden,
            diagnose=diagnose(i),
        )
        for i, (label, part) in enumerate(zip(_PARTS, parts, strict=True))
    ]
