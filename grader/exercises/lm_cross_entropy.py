"""lm-cross-entropy: the mean next-token loss, in nats, from raw logits.

loss = mean over (b, t) of -log softmax(logits[b, t])[targets[b, t]]. The
visible GPT-2 case scores "The sky is" -> " sky is blue" on the seeded
reference: about 11.5 over three positions, near ln(50257) = 10.82 as an
untrained model should be. Hidden cases
include logits in the hundreds, where log(softmax(z)) rounds a probability
to 0 and returns inf, so only a log-softmax computed stably passes.
"""

from __future__ import annotations

import math
import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.result import CheckResult
from grader.checks.tensors import (
    check_no_error,
    compare_tensor,
    failed,
    run_and_capture,
)
from grader.exercises.lm_head_logits import sky_hidden_state
from grader.reference.cache import reference_model

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
        {"name": "gpt2 'The sky is' -> ' sky is blue'", "hidden": False, "gpt2": True},
        {
            "name": "(2, 5, 97) logits",
            "hidden": False,
            "shape": [2, 5, 97],
            "scale": 2.0,
            "seed": 1,
        },
        {
            "name": "hidden logits in the hundreds",
            "hidden": True,
            "shape": [rng.randint(2, 3), rng.randint(4, 7), rng.choice([89, 131])],
            "scale": 300.0,
            "seed": rng.randrange(2**31),
            "worst_targets": True,
        },
    ]
    for i in range(2):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "shape": [
                    rng.randint(2, 4),
                    rng.randint(5, 12),
                    rng.choice([53, 89, 211, 257]),
                ],
                "scale": rng.choice([0.5, 1.0, 3.0]),
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    if case.get("gpt2"):
        weight = reference_model("gpt2").lm_head.weight.detach()
        with torch.no_grad():
            logits = sky_hidden_state() @ weight.T
        return logits, torch.tensor([SKY_NEXT])
    b, t, V = case["shape"]
    g = torch.Generator().manual_seed(case["seed"])
    logits = torch.randn(b, t, V, generator=g) * case["scale"]
    targets = torch.randint(0, V, (b, t), generator=g)
    if case.get("worst_targets"):
        # The least likely token at every other position: its probability
        # is far below float32's smallest positive number.
        targets[:, ::2] = logits[:, ::2].argmin(dim=-1)
    return logits, targets


def run_case(fn, case: dict):
    return run_and_capture(fn, *inputs(case))


def reference(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(logits.double(), dim=-1)
    return -logp.gather(-1, targets.unsqueeze(-1)).mean()


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    logits, targets = inputs(case)
    expected = reference(logits, targets).float()
    got = tensors.get("output")
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=(),
        sizes={},
        rtol=RTOL,
        atol=ATOL,
        what="the loss",
        finite_hint=UNSTABLE,
        dtype_hint="keep the logits' float32",
        hidden=hidden,
    )
    if got is not None and got.shape != expected.shape:
        if got.numel() > 1:
            results.append(_not_reduced(name, hidden))
        return results
    if not failed(results) or got is None:
        return results
    if got.is_floating_point() and not torch.isfinite(got).all():
        return results  # check_finite already named unstable-log-softmax
    z = logits.double()
    logp = torch.log_softmax(z, dim=-1)
    picked = -logp.gather(-1, targets.unsqueeze(-1))
    variants = [
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
            "mean-over-vocabulary",
            lambda: -logp.mean(),
            "your loss averages -log p over every vocabulary entry: take only the "
            "target's log-probability at each position (gather with targets)",
        ),
    ]
    match = fingerprint(
        name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
    )
    if match:
        results.append(match)
    return results


def _not_reduced(name: str, hidden: bool) -> CheckResult:
    return CheckResult(
        name=f"{name}: likely mistake",
        passed=False,
        message="you returned one loss per position: reduce them to a single "
        "number with .mean() (a 0-dimensional tensor)",
        diagnosis="not-reduced",
        hidden=hidden,
    )
