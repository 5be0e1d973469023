"""embedding-share: what fraction of a model's parameters are embedding tables.

The tables are `wte` and `wpe` and, when the head is untied, `lm_head` (a
second vocabulary-sized matrix). A tied head shares `wte`'s tensor and must
be counted once, in the numerator and in the total alike.
"""

from __future__ import annotations

import random

from grading_engine.checks.compared import float_compared
from grading_engine.checks.floats import capture_float
from grading_engine.reference import build_model, get_config, gpt2_parameter_count

SLUG = "embedding-share"
ENTRY_POINT = "embedding_share"
SIGNATURE = "embedding_share(model) -> float"

REL_TOL = 1e-6  # float32 arithmetic is fine; the known slips differ by far more


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "tiny, tied", "hidden": False, "config": "tiny", "tied": True},
        {"name": "mini, untied head", "hidden": False, "config": "mini", "tied": False},
    ]
    for i in range(4):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "config": "tiny",
                "sizes": {
                    "vocab_size": rng.choice([101, 257, 499, 1031]),
                    "block_size": rng.choice([8, 24, 64]),
                    "n_embd": 2 * rng.randint(4, 24),
                    "n_layer": rng.randint(1, 4),
                    "n_head": 2,
                },
                "tied": i % 2 == 0,  # both kinds of head, whatever the seed
            }
        )
    return cases


def _config(case: dict):
    return get_config(case["config"], **(case.get("sizes") or {}))


def run_case(fn, case: dict):
    model = build_model(_config(case), tied=case["tied"])
    return capture_float(fn(model), ints=False), {}


def _counts(case: dict) -> dict:
    c = _config(case)
    V, T, d = c.vocab_size, c.block_size, c.n_embd
    total = gpt2_parameter_count(V, T, d, c.n_layer, tied=case["tied"])
    head = 0 if case["tied"] else V * d
    return {"wte": V * d, "wpe": T * d, "head": head, "total": total}


def reference(case: dict) -> float:
    n = _counts(case)
    return (n["wte"] + n["wpe"] + n["head"]) / n["total"]


def _slips(case: dict) -> list[tuple[float, str, str]]:
    n = _counts(case)
    right = reference(case)
    slips = [
        (
            (n["wte"] + n["head"]) / n["total"],
            "forgot-wpe",
            "the position table wpe is an embedding table too: add its "
            "block_size x n_embd parameters",
        ),
        (
            100 * right,
            "percent-not-fraction",
            "that is a percentage; return the fraction (between 0 and 1)",
        ),
        (
            right / (1 - right),
            "embeddings-over-the-rest",
            "that is the embeddings divided by the OTHER parameters: the "
            "denominator is all of the model's parameters, the embedding "
            "tables included",
        ),
    ]
    if case["tied"]:
        slips.append(
            (
                (2 * n["wte"] + n["wpe"]) / n["total"],
                "counted-tied-twice",
                "the tied lm_head.weight IS wte.weight: adding it to the "
                "numerator counts the same vocab_size x n_embd tensor a second "
                "time (the denominator counted it once); add the head only "
                "when `model.lm_head.weight is not model.transformer.wte.weight`",
            )
        )
        slips.append(
            (
                (2 * n["wte"] + n["wpe"]) / (n["total"] + n["wte"]),
                "counted-tied-twice",
                "the tied lm_head.weight IS wte.weight: counting it under both "
                "names (as state_dict() or named_parameters(remove_duplicate="
                "False) list it) adds vocab_size x n_embd twice; count each "
                "tensor once, e.g. over model.parameters()",
            )
        )
        slips.append(
            (
                (n["wte"] + n["wpe"]) / (n["total"] + n["wte"]),
                "counted-tied-twice",
                "your denominator counts the tied matrix twice: state_dict() "
                "(like named_parameters(remove_duplicate=False)) lists "
                "wte.weight and lm_head.weight, one tensor, under both names. "
                "Count each tensor once, e.g. over model.parameters()",
            )
        )
    else:
        slips.append(
            (
                (n["wte"] + n["wpe"]) / n["total"],
                "untied-head-ignored",
                "this model's lm_head has its own (vocab_size, n_embd) matrix, a "
                "second vocabulary table: count it with the embeddings",
            )
        )
    return slips


check_case = float_compared(
    "embedding share",
    args=lambda case: case,
    rel_tol=REL_TOL,
    spec=".6f",
    float_hint="return a float such as 0.42",
)
