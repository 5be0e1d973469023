"""lm-cross-entropy: the mean next-token loss, in nats, from raw logits.

loss = mean over (b, t) of -log softmax(logits[b, t])[targets[b, t]]. The
visible GPT-2 case scores "The sky is" -> " sky is blue" on the seeded
reference: about 11.5 over three positions, near ln(50257) = 10.82 as an
untrained model should be. Hidden cases
include logits in the hundreds, where log(softmax(z)) rounds a probability
to 0 and returns inf, so only a log-softmax computed stably passes; one such
case ("hidden fixed logits in the hundreds") has the same values every grade.
"""

from __future__ import annotations

import math
import random

import torch

from grading_engine.checks.answers import finite_answer
from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.checks.judges import not_reduced_after
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.logits import draw_logits_cases, random_logits
from grading_engine.exercises.kit.runs import calls
from grading_engine.exercises.kit.sky import gpt2_head, sky_hidden_state
from grading_engine.expected import per_case

SLUG = "lm-cross-entropy"
ENTRY_POINT = "lm_cross_entropy"
SIGNATURE = "lm_cross_entropy(logits, targets) -> Tensor"

SKY_NEXT = [6766, 318, 4171]  # " sky", " is", " blue"
RTOL, ATOL = 1e-4, 1e-5
UNSTABLE = (
    "unstable-log-softmax",
    "a probability rounded to 0 (or exp overflowed) before the log: compute "
    "log-probabilities as z - logsumexp(z) (torch.log_softmax or "
    "F.cross_entropy), never log(softmax(z))",
)


NOT_REDUCED = (
    "you returned one loss per position: reduce them to a single "
    "number with .mean() (a 0-dimensional tensor)"
)

ERRORS = [
    (
        "expected target size",
        "class-axis",
        "F.cross_entropy reads axis 1 as the classes, which for (b, t, V) "
        "logits is time: flatten to (b * t, V) logits and (b * t,) targets, "
        "or move the vocabulary to axis 1 with logits.transpose(1, 2)",
    ),
]


def preload() -> None:
    sky_hidden_state()


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases: list[dict] = [
        new_case("gpt2 'The sky is' -> ' sky is blue'", False, gpt2=True),
        new_case("(2, 5, 97) logits", False, shape=[2, 5, 97], scale=2.0, seed=1),
        new_case(
            "hidden logits in the hundreds",
            True,
            shape=[rng.randint(2, 3), rng.randint(4, 7), rng.choice([89, 131])],
            scale=300.0,
            seed=rng.randrange(2**31),
            worst_targets=True,
        ),
        # The same extreme, with values no draw changes: every grade holds it.
        new_case(
            "hidden fixed logits in the hundreds",
            True,
            shape=[2, 4, 89],
            scale=300.0,
            seed=20260,
            worst_targets=True,
        ),
    ]
    return cases + draw_logits_cases(
        rng,
        "hidden",
        batch=(2, 4),
        time=(5, 12),
        vocab=[53, 89, 211, 257],
    )


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    if case.get("gpt2"):
        with torch.no_grad():
            logits = sky_hidden_state() @ gpt2_head().T
        return logits, torch.tensor([SKY_NEXT])
    logits, targets = random_logits(case)
    if case.get("worst_targets"):
        # The least likely token at every other position: its probability
        # is far below float32's smallest positive number.
        targets[:, ::2] = logits[:, ::2].argmin(dim=-1)
    return logits, targets


run_case = calls(inputs)


def reference(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits.double(), dim=-1)
    return -logp.gather(-1, targets.unsqueeze(-1)).mean()


def _variants(logits: torch.Tensor, targets: torch.Tensor) -> list[Variant]:
    z = logits.double()
    logp = torch.log_softmax(z, dim=-1)
    picked = -logp.gather(-1, targets.unsqueeze(-1))
    return [
        Variant(
            "summed-not-averaged",
            lambda: picked.sum(),
            "your loss is the SUM over positions: average it (divide by b * t), "
            "so the loss does not grow with batch size or sequence length",
        ),
        Variant(
            "bits-not-nats",
            lambda: picked.mean() / math.log(2),
            "your loss is in bits (log base 2): cross-entropy in PyTorch and in "
            "papers' 'loss' curves uses the natural log (nats); bits = nats / ln 2",
        ),
        Variant(
            "softmax-wrong-axis",
            lambda: -torch.log_softmax(z, dim=1)
            .gather(-1, targets.unsqueeze(-1))
            .mean(),
            "your log-softmax normalises over the time axis: normalise over the "
            "vocabulary, the last axis (dim=-1)",
        ),
        Variant(
            "negative-loss",
            lambda: -picked.mean(),
            "your loss has the wrong sign: it is the NEGATIVE log-probability of "
            "the target, a positive number that falls as the model improves",
        ),
        Variant(
            "summed-over-time",
            lambda: picked.squeeze(-1).sum(dim=1).mean(),
            "your loss sums over the time axis and averages over the batch only: "
            "the mean is over all b * t positions, so divide by b * t",
        ),
        Variant(
            "missing-logsumexp",
            lambda: -z.gather(-1, targets.unsqueeze(-1)).mean(),
            "you used the target's raw logit as its log-probability: the "
            "normaliser is missing. -log p = logsumexp(z) - z[target]; subtract "
            "the logsumexp over the vocabulary (log_softmax does)",
        ),
        Variant(
            "targets-shifted-again",
            lambda: -logp[:, :-1].gather(-1, targets[:, 1:].unsqueeze(-1)).mean(),
            "you shifted the targets by one again: here targets[i, j] already IS "
            "the token that follows position j, so score logits[i, j] against "
            "targets[i, j] at every one of the t positions",
        ),
        Variant(
            "mean-over-vocabulary",
            lambda: -logp.mean(),
            "your loss averages -log p over every vocabulary entry: take only the "
            "target's log-probability at each position (gather with targets)",
        ),
    ]


@per_case
def _judged(case: dict):
    """The case's inputs, built once for all of one check's expectations
    (never for run_case: learner code may change what it is given)."""
    return inputs(case)


check_case = tensor_compared(
    _judged,
    as_float=True,
    errors=ERRORS,
    when=finite_answer,  # else check_finite already named unstable-log-softmax
    axes=(),
    what="the loss",
    finite_hint=UNSTABLE,
    dtype_hint="keep the logits' float32",
    after=not_reduced_after(NOT_REDUCED),
)
