"""lm-head-logits: score every vocabulary row against the hidden state.

logits = x @ weight.T, weight stored (V, d) like nn.Linear(d, V). The visible
GPT-2 case feeds the reference's final hidden state for "The sky is" and
shows the top-5 next tokens of both answers. One hidden case is square
(V == d), where x @ weight runs but means something else.
"""

from __future__ import annotations

import functools
import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.tensors import (
    check_no_error,
    compare_tensor,
    failed,
    run_and_capture,
    top_tokens_report,
)
from grader.reference.cache import reference_model
from grader.reference.tokenizer import get_encoding

SLUG = "lm-head-logits"
ENTRY_POINT = "lm_head_logits"
SIGNATURE = "lm_head_logits(x, weight) -> Tensor"

SKY = [464, 6766, 318]  # "The sky is"
SKY_TEXT = "The sky is"
RTOL, ATOL = 1e-4, 1e-5

ERRORS = [
    (
        "cannot be multiplied",
        "transposed-weight",
        "weight is stored (V, d) like nn.Linear(d, V), so the product is "
        "x @ weight.T (or F.linear(x, weight))",
    ),
]


@functools.lru_cache(maxsize=1)
def sky_hidden_state() -> torch.Tensor:
    """The reference's ln_f output for "The sky is": (1, 3, 768)."""
    model = reference_model("gpt2")
    with torch.no_grad():
        return model.forward_trace(torch.tensor([SKY]))["ln_f"].detach()


def preload() -> None:
    sky_hidden_state()
    get_encoding()  # the top-5 report decodes tokens


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "gpt2 'The sky is'", "hidden": False, "gpt2": True},
        {"name": "V=97, d=16", "hidden": False, "V": 97, "d": 16, "b": 3, "t": 5},
        {
            "name": "hidden square head",
            "hidden": True,
            "V": 24,
            "d": 24,
            "b": rng.randint(2, 4),
            "t": rng.randint(5, 9),
            "seed": rng.randrange(2**31),
        },
    ]
    for i in range(2):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "V": rng.choice([89, 131, 211, 257]),
                "d": rng.choice([12, 20, 32]),
                "b": rng.randint(2, 4),
                "t": rng.randint(5, 11),
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    if case.get("gpt2"):
        weight = reference_model("gpt2").lm_head.weight.detach()
        return sky_hidden_state(), weight
    g = torch.Generator().manual_seed(case.get("seed", 0))
    x = torch.randn(case["b"], case["t"], case["d"], generator=g)
    weight = torch.randn(case["V"], case["d"], generator=g) / case["d"] ** 0.5
    return x, weight


def run_case(fn, case: dict):
    return run_and_capture(fn, *inputs(case))


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    x, weight = inputs(case)
    expected = x @ weight.T
    got = tensors.get("output")
    extra = ""
    if case.get("gpt2") and got is not None and got.shape == expected.shape:
        extra = top_tokens_report(got[0, -1], expected[0, -1], prompt=SKY_TEXT)
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "vocab"),
        sizes={"n_embd": weight.shape[1]},
        shape_hints={
            "replaced:vocab->n_embd": (
                "missing-projection",
                "did you return x instead of x @ weight.T?",
            ),
        },
        rtol=RTOL,
        atol=ATOL,
        what="the logits",
        extra=extra,
        hidden=hidden,
    )
    if failed(results) and got is not None and got.shape == expected.shape:
        variants = [
            Variant("transposed-weight", lambda: x @ weight),
            Variant(
                "missing-projection",
                lambda: x,
                "your output is x itself: the head must score every vocabulary "
                "row, x @ weight.T",
            ),
            Variant(
                "probabilities-not-logits",
                lambda: torch.softmax(expected, dim=-1),
                "your output matches softmax(logits): the head returns raw "
                "logits; the softmax belongs to sampling or to the loss",
            ),
            Variant(
                "probabilities-not-logits",
                lambda: torch.log_softmax(expected, dim=-1),
                "your output matches log_softmax(logits): return the raw "
                "logits x @ weight.T; cross_entropy applies log_softmax itself",
            ),
        ]
        match = fingerprint(
            name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
        )
        if match:
            results.append(match)
    return results
