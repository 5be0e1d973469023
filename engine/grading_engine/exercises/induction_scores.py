"""induction-scores: score every head's attention map for the induction pattern.

The test input is a block of `period` random tokens repeated: at query i of
the repeat (i >= period) an induction head attends to the token AFTER the
current token's earlier occurrence, key i - period + 1. The score is the
mean weight on that key over the repeat's queries, one number per head,
compared with the causal-uniform baseline (lesson attention-patterns).
Random causal maps make every slip (the duplicate token at i - period, the
previous token, a sum instead of a mean, rows read as keys, the repeat
assumed to be half the sequence, only the first repeat scored) give a
different number; every draw has a sequence of three repeats, where T // 2
is not the period and a third copy scores too, and one more with
fixed values (and seed): three copies of a 5-token block.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.exercises.kit.cases import new_case, seed_cases
from grading_engine.exercises.kit.runs import calls

SLUG = "induction-scores"
ENTRY_POINT = "induction_scores"
SIGNATURE = "induction_scores(maps, period) -> Tensor"

RTOL, ATOL = 1e-4, 1e-6

MESSAGES = {
    "duplicate-token-not-induction": (
        "your scores match the weight on key i - period: that is the earlier "
        "copy of the current token itself, the duplicate-token pattern. An "
        "induction head looks one further, at the token that FOLLOWED the "
        "earlier copy, key i - period + 1 ([A][B] ... [A] -> [B])"
    ),
    "previous-token-not-induction": (
        "your scores match the weight on key i - 1, the previous-token "
        "pattern: an induction head reads the token after the current "
        "token's earlier occurrence, key i - period + 1"
    ),
    "rows-are-queries": (
        "your scores match maps[..., i - period + 1, i]: row and column "
        "swapped. Row i of an attention map is query i and its columns are "
        "the keys it reads, so the weight query i puts on key j is "
        "maps[..., i, j]; a causal map is 0 above the diagonal, which is "
        "where the swapped index reads"
    ),
    "summed-not-averaged": (
        "your scores match the SUM of the induction weights over the "
        "repeat's queries: a score is their mean, so it stays between 0 "
        "and 1 and can be compared with the causal-uniform baseline, "
        "whatever the sequence length"
    ),
    "induction-query-range": (
        "your scores match a mean over the wrong first query: the repeat "
        "starts at query i = period (the first one whose token has an "
        "earlier copy with a successor), so average over i = period .. T - 1, "
        "T - period queries; one query more or fewer at that boundary is off "
        "by one"
    ),
    "mean-over-all-queries": (
        "your scores match the induction weights summed and divided by T, "
        "the length of the whole sequence: only the T - period queries of "
        "the repeats are scored, so divide by their number (take .mean over "
        "them)"
    ),
    "first-repeat-only": (
        "your scores match a mean over the first repeat only, queries "
        "period .. 2 * period - 1: a sequence may hold more than two copies "
        "of the block, and every query after the first copy scores, so "
        "average over i = period .. T - 1"
    ),
    "period-from-length": (
        "your scores match a period of T // 2: the repeated block is "
        "`period` tokens long, and a sequence may hold more than two "
        "copies of it; use the period you are given"
    ),
}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case(
            "causal-uniform baseline, 50 tokens, period 25",
            False,
            lead=[1, 1],
            period=25,
            repeats=2,
            uniform=True,
        ),
        new_case("2 layers x 3 heads, period 6", False, lead=[2, 3], period=6,
                 repeats=2, scale=2.0),
        new_case(
            "hidden: three copies of the block",
            True,
            lead=[rng.randint(1, 3), rng.randint(2, 4)],
            period=rng.randint(3, 7),
            repeats=3,
            scale=rng.choice([1.0, 3.0]),
        ),
    ]  # fmt: skip
    for i in range(2):
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                lead=[rng.randint(1, 4), rng.randint(1, 4)],
                period=rng.randint(4, 12),
                repeats=2,
                scale=rng.choice([1.0, 2.0, 5.0]),
            )
        )
    cases = seed_cases(cases, rng)
    # The same values (and seed) in every draw: three copies of a 5-token
    # block, T = 15, where T // 2 = 7 is not the period.
    cases.append(
        new_case(
            "hidden: three copies of a 5-token block",
            True,
            lead=[1, 2],
            period=5,
            repeats=3,
            scale=3.0,
            seed=515,
        )
    )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, int]:
    """(maps, period): causal attention maps over `repeats` copies of a block."""
    period = case["period"]
    t = period * case["repeats"]
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    if case.get("uniform"):
        scores = torch.zeros(*case["lead"], t, t)
    else:
        g = torch.Generator().manual_seed(case["seed"])
        scores = torch.randn(*case["lead"], t, t, generator=g) * case["scale"]
    return scores.masked_fill(future, float("-inf")).softmax(-1), period


def scores_at(maps: torch.Tensor, period: int, offset: int) -> torch.Tensor:
    """Mean weight query i (period <= i < T) puts on key i - period + offset."""
    i = torch.arange(period, maps.shape[-1])
    return maps[..., i, i - period + offset].mean(-1)


def reference(maps: torch.Tensor, period: int) -> torch.Tensor:
    return scores_at(maps.double(), period, 1).float()


def _variants(maps: torch.Tensor, period: int) -> list[Variant]:
    t = maps.shape[-1]
    i = torch.arange(period, t)
    q1 = torch.arange(period, 2 * period)  # the first repeat's queries
    compute = {
        "duplicate-token-not-induction": lambda: scores_at(maps, period, 0),
        "previous-token-not-induction": lambda: scores_at(maps, period, period - 1),
        "rows-are-queries": lambda: maps[..., i - period + 1, i].mean(-1),
        "summed-not-averaged": lambda: maps[..., i, i - period + 1].sum(-1),
        "period-from-length": lambda: scores_at(maps, t // 2, 1),
        "mean-over-all-queries": lambda: maps[..., i, i - period + 1].sum(-1) / t,
        "first-repeat-only": lambda: maps[..., q1, q1 - period + 1].mean(-1),
    }
    variants = [Variant(d, fn, MESSAGES[d]) for d, fn in compute.items()]
    for first in (period - 1, period + 1):  # one query more, one fewer
        j = torch.arange(first, t)
        variants.append(
            Variant(
                "induction-query-range",
                lambda j=j: maps[..., j, j - period + 1].mean(-1),
                MESSAGES["induction-query-range"],
            )
        )
    return variants


run_case = calls(inputs)


check_case = tensor_compared(
    inputs,
    axes=("n_layer", "n_head"),
    what="the induction scores",
)
