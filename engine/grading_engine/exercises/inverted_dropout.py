"""inverted-dropout: dropout as GPT-2 trains with it, given the random draws.

In training each element is zeroed with probability p and the survivors
are scaled by 1 / (1 - p), so the expected value is unchanged; in eval mode
dropout is the identity (lesson dropout-in-gpt2). The learner is handed the
uniform draws `u` (an element is dropped where u < p), so a grade is
deterministic. Every draw has training and eval cases; a visible case has
p = 0, where dropout must change nothing even in training. Every case
plants draws exactly at p (kept), one float32 step below (dropped) and one
above (kept), so a strict u > p is caught on every seed.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import new_case, size_cases
from grading_engine.exercises.kit.runs import calls

SLUG = "inverted-dropout"
ENTRY_POINT = "dropout"
SIGNATURE = "dropout(x, p, training, u) -> Tensor"

RTOL, ATOL = 1e-5, 1e-6

MESSAGES = {
    "dropout-no-rescale": (
        "your output matches the survivors left unscaled: zeroing a fraction "
        "p of the elements shrinks the expected value to (1 - p)·x, so "
        "inverted dropout divides the survivors by (1 - p) during training "
        "and leaves eval mode alone"
    ),
    "dropout-p-is-keep": (
        "your output keeps the elements with u < p and drops the rest: p is "
        "the probability of DROPPING an element (GPT-2's 0.1 drops 10%), so "
        "an element survives where u >= p"
    ),
    "dropout-in-eval": (
        "your output drops elements in eval mode: dropout is training-only "
        "noise, the identity when training is False, so the model's "
        "predictions do not change from call to call"
    ),
    "eval-scaled": (
        "your output scales x by (1 - p) in eval mode: that is the original, "
        "non-inverted dropout. With inverted dropout the training step "
        "already divided by (1 - p), so eval returns x unchanged"
    ),
    "dropout-keep-low-draws": (
        "your output keeps an element where its draw u < 1 - p: that keeps "
        "the right share of elements, but not the ones this dropout keeps. "
        "An element is dropped where u < p and kept where u >= p, so the "
        "same draws always give the same mask"
    ),
    "dropout-boundary": (
        "your output drops an element whose draw is exactly p: an element "
        "is dropped where u < p and KEPT where u >= p (F.dropout keeps it "
        "with probability 1 - p); compare with u >= p, not u > p"
    ),
    "dropout-scale-inverted": (
        "your output multiplies the survivors by (1 - p): inverted dropout "
        "DIVIDES them by (1 - p), so the expected value (1 - p) · x / (1 - p) "
        "stays x; multiplying shrinks it to (1 - p)² · x"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("training, p = 0.1, (2, 5, 16)", False,
                 shape=[2, 5, 16], p=0.1, training=True),
        new_case("eval, p = 0.1", False, shape=[2, 5, 16], p=0.1, training=False),
        new_case("training, p = 0: nothing dropped", False,
                 shape=[1, 4, 8], p=0.0, training=True),
        new_case("hidden training 1", True, training=True),
        new_case("hidden eval", True, training=False),
        new_case("hidden training 2", True, training=True),
    ]  # fmt: skip

    def draw() -> dict:
        return {
            "shape": [rng.randint(1, 3), rng.randint(2, 9), rng.choice([8, 12, 32])],
            "p": rng.choice([0.05, 0.1, 0.2, 0.3, 0.5]),
        }

    return size_cases(cases, rng, {}, draw)


def inputs(case: dict):
    """(x, p, training, u): values, and the uniform draws dropout decides by."""
    g = torch.Generator().manual_seed(case["seed"])
    x = torch.randn(*case["shape"], generator=g) + 0.5
    u = torch.rand(*case["shape"], generator=g)
    # The boundary in every case: draws exactly at p (kept, since only
    # u < p is dropped), one float32 step below it (dropped) and one above.
    at = torch.tensor(case["p"], dtype=torch.float32)
    below = torch.nextafter(at, torch.tensor(0.0)) if case["p"] > 0 else at
    above = torch.nextafter(at, torch.tensor(1.0))
    where = torch.randperm(u.numel(), generator=g)[:3]
    u.view(-1)[where] = torch.stack([at, below, above])
    return x, case["p"], case["training"], u


def dropout_variant(x, p, training, u, kind: str = "right") -> torch.Tensor:
    keep = (u < p) if kind == "p-is-keep" else (u >= p)
    if kind == "strict":
        keep = u > p
    elif kind == "keep-low":
        keep = u < 1 - p
    if not training and kind != "in-eval":
        return x * (1 - p) if kind == "eval-scaled" else x.clone()
    scale = 1.0 if kind == "no-rescale" else 1.0 / (1.0 - p)
    if kind == "scale-multiplied":
        scale = 1.0 - p
    return x * keep * scale


def _variants(x, p, training, u) -> list[Variant]:
    kinds = {
        "dropout-no-rescale": "no-rescale",
        "dropout-p-is-keep": "p-is-keep",
        "dropout-keep-low-draws": "keep-low",
        "dropout-in-eval": "in-eval",
        "eval-scaled": "eval-scaled",
        "dropout-boundary": "strict",
        "dropout-scale-inverted": "scale-multiplied",
    }
    return [
        Variant(d, lambda k=k: dropout_variant(x, p, training, u, k), MESSAGES[d])
        for d, k in kinds.items()
    ]


run_case = calls(inputs)


check_case = tensor_compared(
    inputs,
    reference="dropout_variant",
    axes=("batch", "time", "n_embd"),
    what="the dropout output",
)
