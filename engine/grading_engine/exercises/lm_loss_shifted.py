"""lm-loss-shifted: the causal LM loss of a sequence against itself, shifted.

The model reads idx (b, t) and returns logits (b, t, V); position i predicts
token i + 1. So the loss pairs logits[:, :-1] with idx[:, 1:] (t - 1
predictions per row) and averages -log p over those b * (t - 1) pairs. The
usual slips are each a different pairing or reduction, and each gives a
number the parent can recompute: no shift (the token predicts itself),
shifted the wrong way (the token predicts the one before it), a softmax over
the time axis, a sum instead of a mean (or over the batch only), targets
rolled so the last position wraps around to the row's first token. `.view`
on the sliced logits raises for b > 1 because the slice is not contiguous;
the hidden cases all have b > 1.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.checks.judges import not_reduced_after
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.logits import draw_logits_cases, random_logits
from grading_engine.exercises.kit.runs import calls
from grading_engine.reference.cache import reference_model

SLUG = "lm-loss-shifted"
ENTRY_POINT = "lm_loss"
SIGNATURE = "lm_loss(logits, idx) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

NOT_REDUCED = (
    "you returned one loss per position (or per row): reduce to a single "
    "number with .mean(), a 0-dimensional tensor"
)

ERRORS = [
    (
        "view size is not compatible",
        "view-not-reshape",
        "logits[:, :-1] is a slice whose rows are not contiguous in memory once "
        "b > 1, so .view cannot flatten it: use .reshape(-1, V) (it copies "
        "when it must) or .contiguous().view(-1, V)",
    ),
    (
        "expected target size",
        "class-axis",
        "F.cross_entropy reads axis 1 as the classes, which for (b, t - 1, V) "
        "logits is time: flatten to (b * (t - 1), V) logits and "
        "(b * (t - 1),) targets",
    ),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases: list[dict] = [
        new_case(
            "mini model logits, (2, 9) ids", False, model="mini", shape=[2, 9], seed=7
        ),
        new_case(
            "random (3, 6, 53) logits", False, shape=[3, 6, 53], scale=2.0, seed=1
        ),
        new_case(
            "hidden: tiny model logits",
            True,
            model="tiny",
            shape=[rng.randint(2, 4), rng.randint(5, 16)],
            seed=rng.randrange(2**31),
        ),
    ]
    cases += draw_logits_cases(
        rng,
        "hidden random",
        batch=(2, 5),
        time=(3, 14),
        vocab=[29, 89, 131, 257],
    )
    # The limit in every draw: t = 2, the shortest row that has a next token
    # (one prediction per row), where any slice one position off is empty or
    # swapped.
    cases.append(
        new_case(
            "hidden: rows of two tokens (one prediction each)",
            True,
            shape=[rng.randint(2, 5), 2, rng.choice([29, 89, 131])],
            scale=rng.choice((0.5, 1.0, 3.0)),
            seed=rng.randrange(2**31),
        )
    )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits (b, t, V) float32, idx (b, t) int64) for one case."""
    if not case.get("model"):
        return random_logits(case)
    model = reference_model(case["model"])
    b, t = case["shape"]
    g = torch.Generator().manual_seed(case["seed"])
    idx = torch.randint(0, model.config.vocab_size, (b, t), generator=g)
    with torch.no_grad():
        logits = model(idx)
    return logits, idx


def _nll(logits: torch.Tensor, targets: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """-log p(target) per position, in float64."""
    logp = torch.log_softmax(logits.double(), dim=dim)
    return -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def reference(logits: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return _nll(logits[:, :-1], idx[:, 1:]).mean()


run_case = calls(inputs)


def _variants(logits: torch.Tensor, idx: torch.Tensor) -> list[Variant]:
    return [
        Variant(
            "no-shift",
            lambda: _nll(logits, idx).mean(),
            "your loss scores each position against its OWN input token: the "
            "logits at position i predict token i + 1, so pair logits[:, :-1] "
            "with idx[:, 1:]",
        ),
        Variant(
            "no-shift",
            lambda: _nll(logits[:, :-1], idx[:, :-1]).mean(),
            "you dropped the last position but did not shift the targets, so "
            "each position is scored against its own input token: the targets "
            "are idx[:, 1:], the inputs moved one step left",
        ),
        Variant(
            "no-shift",
            lambda: _nll(logits[:, 1:], idx[:, 1:]).mean(),
            "you dropped the first position but did not shift the logits, so "
            "each position is scored against its own input token: keep the "
            "logits of positions 0..t-2 (logits[:, :-1]) for targets idx[:, 1:]",
        ),
        Variant(
            "shifted-across-rows",
            lambda: _nll(
                logits.reshape(-1, logits.size(-1))[:-1].unsqueeze(0),
                idx.reshape(-1)[1:].unsqueeze(0),
            ).mean(),
            "you flattened the batch before shifting: the last position of each "
            "row is then scored against the first token of the NEXT row, a "
            "different sequence. Shift within each row first (logits[:, :-1], "
            "idx[:, 1:]), then flatten",
        ),
        Variant(
            "shifted-wrong-way",
            lambda: _nll(logits[:, 1:], idx[:, :-1]).mean(),
            "you shifted the wrong way: your logits at position i are scored "
            "against token i - 1 (the past). Position i predicts the NEXT "
            "token: logits[:, :-1] against idx[:, 1:]",
        ),
        Variant(
            "softmax-wrong-axis",
            lambda: _nll(logits[:, :-1], idx[:, 1:], dim=1).mean(),
            "your log-softmax normalises over the time axis (dim=1): the "
            "probabilities of one position sum to 1 over the vocabulary, the "
            "last axis",
        ),
        Variant(
            "summed-not-averaged",
            lambda: _nll(logits[:, :-1], idx[:, 1:]).sum(),
            "your loss is the SUM over positions: average it over the "
            "b * (t - 1) predictions so it does not grow with batch or length",
        ),
        Variant(
            "summed-over-time",
            lambda: _nll(logits[:, :-1], idx[:, 1:]).sum() / idx.size(0),
            "you summed the losses of each row and averaged over the batch "
            "only, a per-sequence total that grows with the length: divide the "
            "sum by every prediction, b * (t - 1), not by b",
        ),
        Variant(
            "wrapped-targets",
            lambda: _nll(logits, idx.roll(-1, dims=1)).mean(),
            "your targets wrap around (a roll): the last position is scored "
            "against the row's FIRST token, which it never precedes. The last "
            "position has no next token: drop it, logits[:, :-1] against "
            "idx[:, 1:]",
        ),
        Variant(
            "averaged-over-t",
            lambda: _nll(logits[:, :-1], idx[:, 1:]).sum() / idx.numel(),
            "you divided by b * t, but a row of t tokens gives only t - 1 "
            "predictions (the last token has no next token): average over "
            "b * (t - 1)",
        ),
    ]


check_case = tensor_compared(
    inputs,
    as_float=True,
    errors=ERRORS,
    when=torch.Tensor.is_floating_point,
    axes=(),
    what="the loss",
    dtype_hint="keep the logits' float32",
    after=not_reduced_after(NOT_REDUCED),
)
