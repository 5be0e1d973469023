"""gpt2-param-count: the closed-form parameter count of a GPT-2 shaped model.

wte + wpe + n_layer blocks + ln_f, plus a head of its own only when untied:
124,439,808 for GPT-2 small tied, 163,037,184 untied.
"""

from __future__ import annotations

import random

from grading_engine.checks.judges import int_check
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int
from grading_engine.reference import get_config, gpt2_parameter_count

SLUG = "gpt2-param-count"
ENTRY_POINT = "gpt2_param_count"
SIGNATURE = (
    "gpt2_param_count(vocab_size, block_size, n_embd, n_layer, tied=True) -> int"
)

_SHAPE = ("vocab_size", "block_size", "n_embd", "n_layer")


def _named(name: str, tied: bool | None, hidden: bool) -> dict:
    config = get_config(name)
    args = {key: getattr(config, key) for key in _SHAPE}
    label = name if tied is None else f"{name}, {'tied' if tied else 'untied'}"
    return {"name": label, "hidden": hidden, "args": args, "tied": tied}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _named("gpt2", None, False),  # tied by default
        _named("gpt2", False, False),
        _named("gpt2", True, True),
        _named("gpt2-medium", True, True),
        _named("gpt2-xl", False, True),
        _named("tiny", True, True),
        _named("mini", False, True),
    ]
    for i in range(3):
        args = {
            "vocab_size": rng.randint(1000, 200_000),
            "block_size": rng.choice(
                [128, 256, 512, 2048, 4096, rng.randint(50, 9000)]
            ),
            "n_embd": 64 * rng.randint(2, 40),
            "n_layer": rng.randint(2, 60),
        }
        tied = rng.random() < 0.5
        cases.append(
            {
                "name": f"random shape {i + 1}",
                "hidden": True,
                "args": args,
                "tied": tied,
            }
        )
    return cases


def run_case(fn, case: dict):
    if case["tied"] is None:
        result = fn(*[case["args"][key] for key in _SHAPE])
    else:
        result = fn(*[case["args"][key] for key in _SHAPE], tied=case["tied"])
    return {"result": capture_int(result)}, {}


def _slips(args: dict, tied: bool) -> list[tuple[int, str, str]]:
    V, T, d, L = (args[key] for key in _SHAPE)
    expected = gpt2_parameter_count(V, T, d, L, tied=tied)
    head = V * d
    return [
        (
            expected + head if tied else None,
            "counted-head-twice",
            f"a tied head reuses wte, so its {head:,} parameters count once",
        ),
        (
            expected - head if not tied else None,
            "forgot-untied-head",
            f"with tied=False the head is its own {V:,} x {d:,} matrix (+{head:,})",
        ),
        (
            expected - T * d,
            "forgot-position-embedding",
            f"the position embedding wpe (block_size x n_embd = {T * d:,}) is missing",
        ),
        (
            expected - 2 * d,
            "forgot-final-layernorm",
            "the final LayerNorm ln_f (weight and bias, 2 x n_embd) is missing",
        ),
        *(
            (
                value,
                "head-bias",
                f"GPT-2's lm_head has no bias; +{V:,} is one bias per vocabulary entry",
            )
            # A bias on every head, or on an untied one only: then a tied
            # model's count is the answer (a row that never names a value).
            for value in ([expected + V, expected] if tied else [expected + V])
        ),
        (
            expected - L * 2 * d - d,
            "layernorm-weight-only",
            "each LayerNorm (ln_1, ln_2 and ln_f) has a bias as well as a "
            "weight, 2 x n_embd in all",
        ),
        (
            expected - L * 13 * d,
            "forgot-block-biases",
            "each block also has 13 x n_embd bias and LayerNorm parameters",
        ),
        (
            expected - L * 3 * d,
            "fc-bias-n-embd",
            "each block's mlp.c_fc maps n_embd -> 4 x n_embd, so its bias has "
            "4 x n_embd entries, one per hidden unit, not n_embd",
        ),
        (
            expected + L * 3 * d,
            "bias-by-input-width",
            "each block's mlp.c_proj maps 4 x n_embd -> n_embd; a Linear's bias "
            "has one entry per OUTPUT, n_embd, not one per input",
        ),
        (
            expected - L * (d * d + d),
            "forgot-c-proj",
            "each block's attention has an output projection attn.c_proj "
            "(n_embd -> n_embd, with bias) after c_attn: count it too",
        ),
    ]


@expectation
def expected(case: dict) -> dict:
    """The answer and its known slips (shipped for the visible cases)."""
    args = case["args"]
    tied = True if case["tied"] is None else case["tied"]
    return {
        "value": gpt2_parameter_count(*(args[key] for key in _SHAPE), tied=tied),
        "slips": _slips(args, tied),
    }


check_case = int_check("parameters", expected)
