"""block-param-count: parameters in one GPT-2 transformer block, from n_embd.

Attention (c_attn, c_proj), MLP (c_fc, c_proj) and two LayerNorms give
12 d^2 + 13 d; the cases cover every GPT-2 width and random ones.
"""

from __future__ import annotations

import random

from grading_engine.checks.compared import int_compared
from grading_engine.harness.capture import capture_int
from grading_engine.reference import (  # noqa: F401 - the reference, named below
    block_parameter_count,
    get_config,
)

SLUG = "block-param-count"
ENTRY_POINT = "block_param_count"
SIGNATURE = "block_param_count(n_embd) -> int"


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "gpt2 (n_embd 768)", "hidden": False, "n_embd": 768},
        {"name": "tiny (n_embd 16)", "hidden": False, "n_embd": 16},
    ]
    for name in ("gpt2-medium", "gpt2-large", "gpt2-xl", "mini"):
        n_embd = get_config(name).n_embd
        cases.append(
            {"name": f"{name} (n_embd {n_embd})", "hidden": True, "n_embd": n_embd}
        )
    for i in range(3):
        # Odd widths too: the formula does not care about head counts.
        n_embd = rng.choice([rng.randint(3, 4096), 64 * rng.randint(1, 64)])
        cases.append(
            {"name": f"random width {i + 1}", "hidden": True, "n_embd": n_embd}
        )
    return cases


def run_case(fn, case: dict):
    return {"result": capture_int(fn(case["n_embd"]))}, {}


def _slips(d: int) -> list[tuple[int, str, str]]:
    return [
        (
            12 * d * d,
            "forgot-biases-and-layernorms",
            "that is the weight matrices only (12 d^2); the four Linear layers "
            "have biases (9 d) and the two LayerNorms a weight and a bias each "
            "(4 d)",
        ),
        (
            12 * d * d + 4 * d,
            "forgot-biases",
            "the four Linear layers also have biases: 3d + d + 4d + d = 9d",
        ),
        (
            12 * d * d + 9 * d,
            "forgot-layernorms",
            "the two LayerNorms (ln_1, ln_2) each have a weight and a bias of "
            "n_embd: 4 d more",
        ),
        (
            12 * d * d + 11 * d,
            "layernorm-weight-only",
            "each LayerNorm has a bias as well as a weight (RMSNorm is the one "
            "without): ln_1 and ln_2 hold 2 d each, 4 d in all",
        ),
        (
            4 * d * d + 8 * d,
            "attention-only",
            "that is attention and LayerNorms only; the MLP (c_fc d -> 4d and "
            "c_proj 4d -> d) holds two thirds of a block",
        ),
        (
            11 * d * d + 12 * d,
            "forgot-c-proj",
            "that leaves out attention's output projection attn.c_proj (d -> d, "
            "with bias: d^2 + d); attention has two Linears, c_attn and c_proj",
        ),
        (
            12 * d * d + 16 * d,
            "bias-by-input-width",
            "that sizes mlp.c_proj's bias by its input width (4d); a Linear's "
            "bias has one entry per OUTPUT, and c_proj maps 4d -> d: d biases",
        ),
        (
            12 * d * d + 10 * d,
            "fc-bias-n-embd",
            "that counts mlp.c_fc's bias as d wide; c_fc maps d -> 4d, so its "
            "bias has one entry per hidden unit: 4d",
        ),
    ]


check_case = int_compared(
    "parameters", args=lambda case: case["n_embd"], reference="block_parameter_count"
)
