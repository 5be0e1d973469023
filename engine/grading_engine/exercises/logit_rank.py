"""logit-rank: where a token stands among all logits, counted from 1.

A rank is immune to a global shift of the logits, which is why lessons use
it instead of a raw score. Ties count in the token's favour: rank = 1 + the
number of logits strictly greater. Cases include exact ties and rows of
very different norms, so ranking by cosine instead of logit shows.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.in_place import input_changes
from grading_engine.checks.learner_calls import call_learner
from grading_engine.checks.result import CheckResult
from grading_engine.checks.tensors import case_error
from grading_engine.checks.values import exact_int
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.sky import gpt2_head, sky_hidden_state
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int

SLUG = "logit-rank"
ENTRY_POINT = "logit_rank"
SIGNATURE = "logit_rank(x, weight, token_id) -> int"

BLUE = 4171  # " blue"


_ERRORS = [
    (
        needle,
        "transposed-weight",
        "weight is stored (vocab_size, n_embd), one row per token: the logits "
        "are weight @ x (or x @ weight.T), one dot product per row",
    )
    for needle in ("cannot be multiplied", "size mismatch")
]


def preload() -> None:
    sky_hidden_state()


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("gpt2: ' blue' after 'The sky is'", False, gpt2=True, token=BLUE),
        new_case("V=20 with ties", False, V=20, d=4, ties=3, seed=1),
        new_case("hidden gpt2 token", True, gpt2=True, seed=rng.randrange(2**31)),
    ]
    for i in range(3):
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                V=rng.choice([53, 89, 131, 257]),
                d=rng.choice([3, 6, 10]),
                ties=rng.choice([0, 2, 4]) if i else 2,
                seed=rng.randrange(2**31),
            )
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, int]:
    if case.get("gpt2"):
        x, weight = sky_hidden_state()[0, -1], gpt2_head()
        token = case.get("token")
        if token is None:
            token = _well_separated_token(weight @ x, case["seed"])
        return x, weight, token
    g = torch.Generator().manual_seed(case["seed"])
    V, d = case["V"], case["d"]
    # Small integers: every dot product is exact in float32 whatever the
    # summation order, so ties are real ties for the learner's code too.
    # Rows of unequal norm make a cosine ranking disagree with the logits.
    weight = torch.randint(-4, 5, (V, d), generator=g) * torch.randint(
        1, 4, (V, 1), generator=g
    )
    weight, x = weight.float(), torch.randint(-3, 4, (d,), generator=g).float()
    logits = weight @ x
    # A token from the middle of the ranking, so both directions are wrong.
    order = torch.argsort(logits, descending=True)
    token = int(order[V // 3 + int(torch.randint(0, V // 3, (1,), generator=g))])
    for row in torch.randperm(V, generator=g)[: case["ties"]].tolist():
        if row != token:
            weight[row] = weight[token]
    return x, weight, token


def _well_separated_token(logits: torch.Tensor, seed: int) -> int:
    """A random token whose logit no other logit comes within 1e-4 of.

    Float32 logits computed in another order differ by ~1e-6, so such a
    token has the same rank however the learner computes them.
    """
    rng = random.Random(seed)
    values = logits.double()
    while True:
        token = rng.randrange(values.numel())
        gaps = (values - values[token]).abs()
        gaps[token] = float("inf")
        if float(gaps.min()) > 1e-4:
            return token


def rank_of(logits: torch.Tensor, token: int) -> int:
    return 1 + int((logits > logits[token]).sum())


def _band(scores: torch.Tensor, token: int) -> tuple[int, int]:
    """Ranks another computation of `scores` could give, up to rounding."""
    own, tol = scores[token], 1e-5 * float(scores.abs().max())
    return 1 + int((scores > own + tol).sum()), int((scores > own - tol).sum())


def run_case(fn, case: dict):
    x, weight, token = inputs(case)
    value, error = call_learner(fn, x, weight, token)
    return {"error": error, "rank": capture_int(value)}, {}


def _bands(logits: torch.Tensor, weight: torch.Tensor, token: int, expected: int):
    """(lowest, highest) rank each known mistake gives, with its diagnosis;
    a band where a computation rounds differently (cosines of proportional
    rows)."""
    own = logits[token]
    cosine = logits / weight.norm(dim=1)
    ahead, tied = int((logits > own).sum()), int((logits == own).sum())
    return [
        (
            (expected - 1,) * 2,
            "zero-based-rank",
            "that is the count of logits above the token: ranks start at 1 "
            "(the top token has rank 1), so add 1",
        ),
        (
            (ahead + tied,) * 2,
            "ties-counted-ahead",
            "you counted tokens whose logit EQUALS the token's as ahead of it: "
            "ties share the better rank, 1 + the number strictly greater",
        ),
        (
            (1 + int((logits < own).sum()),) * 2,
            "rank-from-bottom",
            "that is the rank counted from the lowest logit: sort descending, "
            "so the largest logit has rank 1",
        ),
        (
            _band(cosine, token),
            "cosine-not-logit",
            "that is the rank by cosine similarity: the logit is the dot "
            "product weight[i] @ x, and row norms count",
        ),
        (
            (ahead + 2, ahead + tied),
            "ties-counted-ahead",
            "your rank falls inside a group of tied logits: a sort breaks "
            "ties arbitrarily; count the logits strictly greater instead",
        ),
    ]


def _in_band(bands, expected: int):
    """A `diagnose` for exact_int: the first band a wrong rank falls in."""

    def diagnose(got: int):
        for (low, high), diagnosis, hint in bands:
            if low <= got <= high and got != expected:
                return diagnosis, hint
        return None

    return diagnose


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The answer's checks, and one for an argument changed in place."""
    changed = input_changes(case["name"], data, hidden=bool(case["hidden"]))
    return changed + _check_answer(case, data, tensors)


@expectation
def ranks(case: dict) -> dict:
    """The token's rank and the bands of the known mistakes (shipped for the
    visible cases)."""
    x, weight, token = inputs(case)
    logits = weight @ x
    expected = rank_of(logits, token)
    return {
        "token": token,
        "logits": logits.numel(),
        "rank": expected,
        "bands": _bands(logits, weight, token, expected),
    }


def _check_answer(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    if raised := case_error(case, data, _ERRORS):
        return raised
    known = ranks(case)
    expected = known["rank"]
    what = f"rank of token {known['token']} among {known['logits']:,} logits"
    return [
        exact_int(
            f"{case['name']}: {what}",
            data.get("rank"),
            expected,
            hidden=bool(case["hidden"]),
            diagnose=_in_band(known["bands"], expected),
        )
    ]
