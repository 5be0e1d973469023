"""warmup-cosine-lr: nanoGPT's learning-rate schedule, step by step.

A linear ramp peak · (it + 1) / (warmup + 1) while it < warmup; a half
cosine from peak down to min_lr between warmup and decay; min_lr after
decay (lesson warmup-cosine, nanoGPT's get_lr). Every case asks for the
boundaries (step 0, the last warmup step, the first decay step, the steps
just before, at and just after the end of the decay, a step past it) and a
step inside the decay, so a ramp that starts at 0, a decay to 0 instead of
the floor, a decay that forgets the warmup, a linear decay and a cosine
that climbs back after `decay` are each seen and named in every draw.
"""

from __future__ import annotations

import math
import random

from grading_engine.checks.floats import capture_float, float_close
from grading_engine.checks.result import CheckResult
from grading_engine.expected import expectation

SLUG = "warmup-cosine-lr"
ENTRY_POINT = "get_lr"
SIGNATURE = "get_lr(it, peak, min_lr, warmup, decay) -> float"
_ARGS = ("peak", "min_lr", "warmup", "decay")

REL_TOL = 1e-9


def reference(it, peak, min_lr, warmup, decay) -> float:
    if it < warmup:
        return peak * (it + 1) / (warmup + 1)
    if it > decay:
        return min_lr
    ratio = (it - warmup) / (decay - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (peak - min_lr)


def _case(name: str, hidden: bool, steps: list[int], **args) -> dict:
    return {"name": name, "hidden": hidden, "args": args, "steps": steps}


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case("nanoGPT's GPT-2 schedule", False,
              [0, 999, 1999, 2000, 301000, 600000, 700000],
              peak=6e-4, min_lr=6e-5, warmup=2000, decay=600000),
        _case("a short run: 10 warmup steps, decay to step 100", False,
              [0, 5, 9, 10, 40, 100, 150],
              peak=1e-3, min_lr=1e-4, warmup=10, decay=100),
    ]  # fmt: skip
    for i in range(3):
        warmup = rng.randint(5, 5000)
        decay = warmup + rng.randint(50, 200_000)
        peak = rng.choice([1e-4, 3e-4, 6e-4, 1e-3, 3e-3])
        steps = [
            0,
            rng.randint(1, warmup - 2),
            warmup - 1,
            warmup,
            warmup + rng.randint(1, decay - warmup - 1),
            decay - 1,
            decay,
            decay + 1,
            decay + rng.randint(2, decay - warmup - 1),  # the cosine would climb
        ]
        cases.append(
            _case(
                f"random schedule {i + 1}",
                True,
                steps,
                peak=peak,
                min_lr=peak * rng.choice([0.05, 0.1, 0.2]),
                warmup=warmup,
                decay=decay,
            )
        )
    return cases


def run_case(fn, case: dict):
    args = case["args"]
    rates = [
        capture_float(fn(it, *(args[key] for key in _ARGS))) for it in case["steps"]
    ]
    return {"rates": rates}, {}


def _slips(it: int, peak, min_lr, warmup, decay) -> list[tuple[float, str, str]]:
    def cosine(ratio: float, floor: float) -> float:
        return floor + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (peak - floor)

    if it < warmup:
        return [
            (
                peak * it / warmup,
                "warmup-starts-at-zero",
                "a ramp of peak · it / warmup gives step 0 a learning rate of 0, "
                "a step that changes nothing; nanoGPT's ramp is "
                "peak · (it + 1) / (warmup + 1), small but not zero",
            ),
            (
                peak * (it + 1) / warmup,
                "warmup-off-by-one",
                "your ramp divides by warmup: it reaches the peak already at "
                "step warmup - 1, the last warmup step. The ramp is "
                "peak · (it + 1) / (warmup + 1), just below the peak at its "
                "last step",
            ),
        ]
    ratio = (it - warmup) / (decay - warmup)
    if it > decay:
        return [
            (
                cosine(ratio, min_lr),
                "no-floor-after-decay",
                "past `decay` the cosine starts climbing back towards the peak; "
                "the schedule stays at min_lr after the decay ends",
            ),
            (
                0.0,
                "decays-to-zero",
                "after the decay the rate stays at the floor, min_lr, not 0",
            ),
        ]
    return [
        *_decay_slips(it, peak, min_lr, warmup, decay),
        (
            cosine(ratio, 0.0),
            "decays-to-zero",
            "that cosine ends at 0; it should end at the floor: "
            "min_lr + 0.5 · (1 + cos(π · ratio)) · (peak - min_lr)",
        ),
        (
            cosine(it / decay, min_lr),
            "decay-ignores-warmup",
            "the decay starts when the warmup ends: ratio = (it - warmup) / "
            "(decay - warmup), 0 at the first decay step and 1 at `decay`",
        ),
        (
            min_lr + 0.5 * (1.0 + math.cos(ratio)) * (peak - min_lr),
            "cosine-missing-pi",
            "your cosine is missing its factor π: cos(ratio) covers only a "
            "third of the half-turn, so the rate never comes down to min_lr. "
            "Use cos(π · ratio), which goes from 1 to -1 as ratio goes 0 to 1",
        ),
        (
            min_lr + (1.0 - ratio) * (peak - min_lr),
            "linear-not-cosine",
            "that is a straight line from peak to min_lr; the schedule is a half "
            "cosine, flat at both ends: 0.5 · (1 + cos(π · ratio))",
        ),
    ]


def _decay_slips(it: int, peak, min_lr, warmup, decay) -> list[tuple[float, str, str]]:
    """Decays that agree with the answer at one end of the decay (or both),
    listed at the steps where they differ from it."""
    ratio = (it - warmup) / (decay - warmup)
    half_cosine = 0.5 * (1.0 + math.cos(math.pi * ratio))
    slips = []
    if it > warmup:  # both ratios are 0 at the first decay step
        late = 0.5 * (1.0 + math.cos(math.pi * (it - warmup) / decay))
        slips.append(
            (
                min_lr + late * (peak - min_lr),
                "ratio-over-decay",
                "your ratio divides by decay, but the cosine covers only the "
                "decay - warmup steps after the warmup: divide it - warmup by "
                "decay - warmup, so the ratio reaches 1 (and the rate min_lr) "
                "at step decay",
            )
        )
    if it < decay:  # both cosines are at min_lr at the last decay step
        slips.append(
            (
                min_lr + half_cosine * peak,
                "cosine-scales-peak",
                "your cosine term multiplies peak, so the decay starts at "
                "peak + min_lr: it spans the gap between the two rates, "
                "0.5 · (1 + cos(π · ratio)) · (peak - min_lr), added to min_lr",
            )
        )
        slips.append(
            (
                min_lr + 2 * half_cosine * (peak - min_lr),
                "cosine-missing-half",
                "your cosine term is twice the right one, so the decay starts "
                "at 2 · peak - min_lr: 1 + cos(π · ratio) goes from 2 to 0, "
                "and the factor 0.5 makes it go from 1 to 0",
            )
        )
    if warmup < it < decay:  # an integer ratio is 0 inside, 1 at decay
        slips.append(
            (
                peak,
                "ratio-floor-division",
                "your rate stays at the peak inside the decay, as when the "
                "ratio is computed with integer division //, which is 0 until "
                "the last decay step: divide with /, so the ratio grows from 0 "
                "to 1 step by step",
            )
        )
    return slips


@expectation
def expected(case: dict) -> list[tuple[float, list]]:
    """Each step's rate and its known slips (shipped for the visible cases)."""
    args = case["args"]
    return [(reference(it, **args), _slips(it, **args)) for it in case["steps"]]


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    steps = case["steps"]
    rates = data.get("rates")
    if not isinstance(rates, list) or len(rates) != len(steps):
        rates = [{} for _ in steps]
    results = []
    answers = expected(case)
    for it, captured, (rate, slips) in zip(steps, rates, answers, strict=True):
        results.append(
            float_close(
                f"{case['name']}: step {it:,}",
                captured if isinstance(captured, dict) else {},
                rate,
                slips,
                rel_tol=REL_TOL,
                spec=".4e",
                float_hint="return the learning rate as a float",
                hidden=bool(case["hidden"]),
            )
        )
    return results
