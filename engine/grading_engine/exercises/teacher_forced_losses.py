"""teacher-forced-losses: every position's next-token loss from one forward pass.

With teacher forcing every position reads the TRUE tokens before it, so one
pass over seq[:, :-1] gives the logits of all t - 1 prefix problems at once
(the causal mask keeps them independent) and each is scored against the
next true token (lesson teacher-forcing). The slips: feeding the model its
own argmax guesses (free-running generation: only position 0 agrees),
scoring each position against its own input token, a log-softmax over
the time axis, none at all (nll_loss on raw logits) or one too many
(probabilities into F.cross_entropy), and averaging the losses into one
number, which is recognised from its value. Every draw also
holds one fixed full row (b=2, t=block_size + 1, vocab 61, seed 20260).
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.checks.result import likely_mistake
from grading_engine.exercises.kit.cases import new_case, size_cases
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import per_case
from grading_engine.reference import build_model, get_config

SLUG = "teacher-forced-losses"
ENTRY_POINT = "teacher_forced_losses"
SIGNATURE = "teacher_forced_losses(model, seq) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5

MESSAGES = {
    "fed-own-predictions": (
        "your losses match free-running generation: the model was fed its "
        "own argmax guesses after the first token. Teacher forcing feeds "
        "the TRUE tokens 0..i at every position, so all positions come "
        "from one forward pass over seq[:, :-1]"
    ),
    "no-shift": (
        "your losses match scoring the logits at position i against token "
        "i, the token the position just read: the logits at i predict the "
        "NEXT token, so the targets are seq[:, 1:]"
    ),
    "softmax-wrong-axis": (
        "your losses match a log-softmax over the time axis (dim=1): each "
        "position's probabilities are over the vocabulary, so normalise the "
        "logits over the last axis (dim=-1) before reading the target's"
    ),
    "missing-logsumexp": (
        "your losses are minus the target's raw logit: F.nll_loss expects "
        "log-probabilities and does not take a softmax itself. Apply "
        "log_softmax over the vocabulary first (or use F.cross_entropy, "
        "which does both)"
    ),
    "softmax-before-cross-entropy": (
        "your losses match F.cross_entropy given softmax probabilities: it "
        "applies log_softmax itself, so the softmax ran twice and every loss "
        "is squeezed towards log(vocab_size). Pass the raw logits"
    ),
    "mean-not-per-position": (
        "you returned the mean of the per-position losses: this exercise "
        "asks for all of them, shape (b, t - 1), one next-token loss per "
        "position, which is what one teacher-forced pass gives"
    ),
}


BLOCK_SIZE = get_config("tiny").block_size  # 16

ERRORS = [
    (
        "cannot forward a sequence of length",
        "fed-whole-row",
        f"seq holds up to block_size + 1 = {BLOCK_SIZE + 1} tokens and the model "
        f"reads at most block_size = {BLOCK_SIZE}: the last token is only ever a "
        "target (nothing follows it), so feed seq[:, :-1], not the whole row",
    ),
    (
        "expected target size",
        "class-axis",
        "F.cross_entropy reads axis 1 as the classes, which for (b, t - 1, V) "
        "logits is time: pass logits.transpose(1, 2) (classes on axis 1), or "
        "flatten to (b * (t - 1), V) and reshape the losses back",
    ),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("tiny, one row of 13 tokens", False, b=1, t=13, vocab=97),
        new_case("tiny, 3 rows of 8 tokens", False, b=3, t=8, vocab=97),
        *(new_case(f"hidden {i + 1}", True) for i in range(2)),
        # The limits in every draw: a full training row of block_size + 1
        # tokens (the model reads only block_size of them) and the shortest
        # row, two tokens, one prediction.
        new_case("hidden: a row of block_size + 1 tokens", True),
        new_case("hidden: rows of two tokens", True),
    ]

    def draw() -> dict:
        return {
            "b": rng.randint(1, 4),
            "t": rng.randint(4, BLOCK_SIZE),
            "vocab": rng.choice([61, 97, 131]),
        }

    cases = size_cases(cases, rng, {}, draw)
    cases[-2]["t"], cases[-1]["t"] = BLOCK_SIZE + 1, 2
    cases[-1]["b"] = max(cases[-1]["b"], 2)
    # The same full row in every draw (sizes and seed fixed, after the draws
    # above so they stay as they were): feeding the whole row fails on any seed.
    cases.append(
        new_case(
            "hidden: a fixed row of block_size + 1 tokens",
            True,
            b=2,
            t=BLOCK_SIZE + 1,
            vocab=61,
            seed=20260,
        )
    )
    return cases


def inputs(case: dict):
    """(model, seq): a seeded tiny reference model and random token rows."""
    model = build_model(get_config("tiny", vocab_size=case["vocab"]), seed=case["seed"])
    g = torch.Generator().manual_seed(case["seed"])
    seq = torch.randint(0, case["vocab"], (case["b"], case["t"]), generator=g)
    return model.requires_grad_(False), seq


def _losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")


def reference(model, seq) -> torch.Tensor:
    with torch.no_grad():
        return _losses(model(seq[:, :-1]), seq[:, 1:])


def free_running(model, seq) -> torch.Tensor:
    """The losses of the true tokens when the model reads its own guesses."""
    cur, losses = seq[:, :1], []
    with torch.no_grad():
        for i in range(seq.shape[1] - 1):
            last = model(cur)[:, -1]
            losses.append(F.cross_entropy(last, seq[:, i + 1], reduction="none"))
            cur = torch.cat([cur, last.argmax(-1, keepdim=True)], dim=1)
    return torch.stack(losses, dim=1)


def _variants(model, seq) -> list[Variant]:
    def unshifted():
        with torch.no_grad():
            return _losses(model(seq[:, :-1]), seq[:, :-1])

    def scored(logp: torch.Tensor) -> torch.Tensor:
        return -logp.gather(-1, seq[:, 1:].unsqueeze(-1)).squeeze(-1)

    def logits():
        with torch.no_grad():
            return model(seq[:, :-1])

    return [
        Variant(
            "softmax-wrong-axis",
            lambda: scored(torch.log_softmax(logits(), dim=1)),
            MESSAGES["softmax-wrong-axis"],
        ),
        Variant(
            "softmax-before-cross-entropy",
            lambda: scored(torch.log_softmax(logits().softmax(-1), dim=-1)),
            MESSAGES["softmax-before-cross-entropy"],
        ),
        Variant(
            "missing-logsumexp", lambda: scored(logits()), MESSAGES["missing-logsumexp"]
        ),
        Variant(
            "fed-own-predictions",
            lambda: free_running(model, seq),
            MESSAGES["fed-own-predictions"],
        ),
        Variant("no-shift", unshifted, MESSAGES["no-shift"]),
    ]


run_case = calls(inputs)


@per_case
def _judged(case: dict):
    """The case's inputs, built once for all of one check's expectations
    (never for run_case: learner code may change what it is given)."""
    return inputs(case)


_declared = tensor_compared(
    _judged,
    errors=ERRORS,
    axes=("batch", "position"),
    what="the per-position losses",
)


def check_case(case: dict, data: dict, tensors: dict):
    """The declared chain, then the one mistake of another shape: the mean
    of the losses, one number, known by its value."""
    results = _declared(case, data, tensors)
    got = tensors.get("output")
    if (
        not data.get("error")
        and got is not None
        and got.numel() == 1
        and got.is_floating_point()
        and torch.allclose(
            got.double().reshape(()),
            _declared.expected(case).double().mean(),
            atol=ATOL,
        )
    ):
        results.append(
            likely_mistake(
                case["name"],
                MESSAGES["mean-not-per-position"],
                diagnosis="mean-not-per-position",
                hidden=bool(case["hidden"]),
            )
        )
    return results
