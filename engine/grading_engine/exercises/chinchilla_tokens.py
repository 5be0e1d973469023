"""chinchilla-tokens: the compute-optimal token budget for a FLOP budget.

With C = 6·N·D and D = r·N (r tokens per parameter, about 20 for
Chinchilla), C = 6·r·N², so N = sqrt(C / (6r)) and D = r·N = sqrt(C·r / 6).
The usual slips return N instead of D, count 2·N·D or N·D FLOPs, forget
that N grows as sqrt(C), or use 20 whatever r is asked; each is off by a
factor that depends on C or r, which is how it is named. Every draw has
hidden cases with r other than 20, one of them fixed (1e22 FLOPs at r = 10).
"""

from __future__ import annotations

import math
import random
from functools import partial

from grading_engine.checks.compared import float_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_float

SLUG = "chinchilla-tokens"
ENTRY_POINT = "chinchilla_tokens"
SIGNATURE = "chinchilla_tokens(flops, tokens_per_param) -> float"
_ARGS = ("flops", "tokens_per_param")

REL_TOL = 1e-9
GPT2_MEDIUM = 354_823_168


def reference(flops, tokens_per_param) -> float:
    return math.sqrt(flops * tokens_per_param / 6)


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case("Gopher's budget, 5.76e23 FLOPs, 20 tokens per parameter", False,
              flops=5.76e23, tokens_per_param=20),
        _case("1.2e21 FLOPs, 20 tokens per parameter", False,
              flops=1.2e21, tokens_per_param=20),
        _case("GPT-2 medium's compute-optimal budget", True,
              flops=6.0 * GPT2_MEDIUM * 20 * GPT2_MEDIUM, tokens_per_param=20),
        _case("1e22 FLOPs, 10 tokens per parameter", True,
              flops=1e22, tokens_per_param=10),  # r != 20 in every draw
    ]  # fmt: skip
    ratios = [5, 10, 15, 25, 30, 40, 100, 200]
    for i in range(3):
        cases.append(
            _case(
                f"random budget {i + 1}",
                True,
                flops=float(f"{10 ** rng.uniform(18, 26):.3g}"),
                tokens_per_param=rng.choice(ratios),  # never 20: see the slips
            )
        )
    return cases


run_case = returns_float(_ARGS)


def _slips(args: dict) -> list[tuple[float, str, str]]:
    c, r = args["flops"], args["tokens_per_param"]
    right = reference(c, r)
    slips = [
        (
            math.sqrt(c / (6 * r)),
            "returned-params-not-tokens",
            "that is N, the compute-optimal parameter count; the token budget "
            "is D = tokens_per_param · N",
        ),
        (
            right * math.sqrt(3),
            "forgot-backward",
            "that splits C = 2·N·D, the forward pass only; training costs "
            "6·N·D FLOPs (backward is twice the forward), so C = 6·r·N²",
        ),
        (
            right * math.sqrt(6),
            "compute-as-n-times-d",
            "that splits C = N·D; training costs about 6 FLOPs per parameter "
            "per token, C = 6·N·D, so D = sqrt(C · r / 6)",
        ),
        (
            right / math.sqrt(6),
            "six-outside-sqrt",
            "that is sqrt(C · r) / 6: the 6 of C = 6·N·D belongs under the "
            "square root, D = sqrt(C · r / 6)",
        ),
        (
            math.sqrt(c / 6),
            "n-equals-d",
            "that solves C = 6·D², as if the run trained on one token per "
            "parameter (N = D); with D = r·N, C = 6·N·D = 6·D²/r, so "
            "D = sqrt(C · r / 6)",
        ),
        (
            r * right,
            "ratio-multiplied-for-n",
            "that is r times too many tokens: N came out as sqrt(C / 6 · r), "
            "where C = 6·r·N² gives N = sqrt(C / (6·r)). Note that "
            "flops / 6 * r multiplies by r; put 6 * r in parentheses",
        ),
        (
            c / 6,
            "no-sqrt-scaling",
            "that is C / 6, linear in compute; with D = r·N, C = 6·r·N², so "
            "N and D each grow as the SQUARE ROOT of C: every 4x of compute "
            "doubles both",
        ),
    ]
    if r != 20:
        slips.append(
            (
                reference(c, 20),
                "fixed-20-tokens-per-param",
                f"that is the budget at 20 tokens per parameter; this case asks "
                f"for {r}: use the tokens_per_param argument",
            )
        )
    return slips


check_case = float_compared("tokens", rel_tol=REL_TOL, spec=".4g", unit="tokens")
