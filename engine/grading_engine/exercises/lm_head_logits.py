"""lm-head-logits: score every vocabulary row against the hidden state.

logits = x @ weight.T, weight stored (V, d) like nn.Linear(d, V). The visible
GPT-2 case feeds the reference's final hidden state for "The sky is" and
shows the top-5 next tokens of both answers; x is ln_f's output already,
so a LayerNorm applied again is a known mistake, as are cosine similarities
(both sides normalised). One hidden case is square (V == d), where
x @ weight runs but means something else.
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from grading_engine.checks.answers import tensor_answer
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.tensors import case_error, top_tokens_report
from grading_engine.exercises.kit.cases import normal
from grading_engine.exercises.kit.runs import calls
from grading_engine.exercises.kit.sky import SKY_TEXT, gpt2_head, sky_hidden_state
from grading_engine.expected import expectation
from grading_engine.reference.tokenizer import get_encoding

SLUG = "lm-head-logits"
ENTRY_POINT = "lm_head_logits"
SIGNATURE = "lm_head_logits(x, weight) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

ERRORS = [
    (
        "cannot be multiplied",
        "transposed-weight",
        "weight is stored (V, d) like nn.Linear(d, V), so the product is "
        "x @ weight.T (or F.linear(x, weight))",
    ),
]


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
        return sky_hidden_state(), gpt2_head()
    x, weight = normal(
        case.get("seed", 0), (case["b"], case["t"], case["d"]), (case["V"], case["d"])
    )
    return x, weight / case["d"] ** 0.5


run_case = calls(inputs)


def _variants(x, weight, expected) -> list[Variant]:
    return [
        Variant("transposed-weight", lambda: x @ weight),
        Variant(
            "scaled-logits",
            lambda: expected / weight.shape[1] ** 0.5,
            "your output matches the logits divided by sqrt(n_embd), the "
            "scale of attention scores: the head has no scale, its logits "
            "are the plain dot products x @ weight.T",
        ),
        Variant(
            "normalised-again",
            lambda: F.layer_norm(x, x.shape[-1:]) @ weight.T,
            "your output matches the head applied to layer_norm(x): x is "
            "already the output of ln_f, the model's last LayerNorm, so "
            "normalising it again (without ln_f's gain and bias) changes the "
            "scores. Multiply x by the head's weight as it is",
        ),
        Variant(
            "cosine-logits",
            lambda: F.normalize(x, dim=-1) @ F.normalize(weight, dim=-1).T,
            "your output matches cosine similarities, x and the rows of weight "
            "each scaled to length 1 first: the logits are the raw dot "
            "products x @ weight.T, whose row lengths are part of the score",
        ),
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


@expectation
def expected_output(case: dict) -> dict:
    """The right logits and n_embd (shipped for the visible cases)."""
    x, weight = inputs(case)
    return {"output": x @ weight.T, "n_embd": weight.shape[1]}


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    x, weight = inputs(case)
    return computed(_variants(x, weight, x @ weight.T))


def check_case(case: dict, data: dict, tensors: dict):
    if raised := case_error(case, data, ERRORS):
        return raised
    shipped = expected_output(case)
    expected = shipped["output"]
    extra = ""
    if case.get("gpt2"):
        extra = top_tokens_report(tensors.get("output"), expected, prompt=SKY_TEXT)
    return tensor_answer(
        case["name"],
        data,
        tensors,
        expected,
        variants=lambda: shipped_variants(known_mistakes(case)),
        axes=("batch", "time", "vocab"),
        sizes={"n_embd": shipped["n_embd"]},
        shape_hints={
            "replaced:vocab->n_embd": (
                "missing-projection",
                "did you return x instead of x @ weight.T?",
            ),
            "missing:time": (
                "last-position-only",
                "you kept only one position (x[:, -1], as generation does): "
                "the head scores every position, so the logits keep the time "
                "axis, (b, t, vocab_size)",
            ),
        },
        rtol=RTOL,
        atol=ATOL,
        what="the logits",
        extra=extra,
        hidden=bool(case["hidden"]),
    )
