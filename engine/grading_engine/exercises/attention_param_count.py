"""attention-param-count: parameters of one GPT-2 attention layer.

c_attn (d -> 3d) and c_proj (d -> d) with biases: 4 d^2 + 4 d. The head count
is an argument on purpose: it splits the same matrices and adds nothing.
"""

from __future__ import annotations

import random

from grading_engine.checks.compared import int_compared
from grading_engine.harness.capture import capture_int
from grading_engine.reference import get_config

SLUG = "attention-param-count"
ENTRY_POINT = "attention_param_count"
SIGNATURE = "attention_param_count(n_embd, n_head) -> int"


def reference(n_embd: int, n_head: int) -> int:
    return 4 * n_embd * n_embd + 4 * n_embd


def _config_case(name: str, hidden: bool) -> dict:
    c = get_config(name)
    label = f"{name} (n_embd {c.n_embd}, {c.n_head} heads)"
    return {"name": label, "hidden": hidden, "n_embd": c.n_embd, "n_head": c.n_head}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [_config_case("gpt2", False), _config_case("tiny", False)]
    cases += [_config_case(n, True) for n in ("gpt2-medium", "gpt2-large", "gpt2-xl")]
    for i in range(3):
        head_dim = rng.choice([16, 32, 64, 80, 128])
        n_head = rng.randint(2, 40)
        cases.append(
            {
                "name": f"random layer {i + 1}",
                "hidden": True,
                "n_embd": head_dim * n_head,
                "n_head": n_head,
            }
        )
    return cases


def run_case(fn, case: dict):
    return {"result": capture_int(fn(case["n_embd"], case["n_head"]))}, {}


def _slips(d: int, h: int) -> list[tuple[int, str, str]]:
    return [
        (4 * d * d, "forgot-biases", "c_attn has 3d biases and c_proj d more: 4d"),
        (
            3 * d * d + 3 * d,
            "forgot-c-proj",
            "that is c_attn alone; the output projection c_proj (d -> d, with "
            "bias) belongs to the attention layer too",
        ),
        (
            h * (4 * d * d + 4 * d),
            "counted-per-head",
            "heads do not own separate matrices: c_attn is split into n_head "
            "slices of width n_embd / n_head, so the count does not grow with heads",
        ),
        (
            4 * d * d + 2 * d,
            "qkv-bias-once",
            "c_attn's bias is as wide as its output, 3 * n_embd (one bias each "
            "for q, k and v), not n_embd: the biases are 3d + d = 4d",
        ),
        (
            4 * d * d + 3 * d,
            "forgot-biases",
            "you left out c_proj's bias: the output projection is an nn.Linear "
            "with bias too, d more parameters (4d biases in all)",
        ),
        (
            4 * d * d + 6 * d,
            "counted-layernorm",
            "ln_1 (2d) sits before attention but belongs to the block, not the "
            "attention layer",
        ),
    ]


check_case = int_compared(
    "parameters", args=lambda case: (case["n_embd"], case["n_head"])
)
