"""loss-scale: the dynamic loss scale of fp16 mixed precision, step by step.

Each step, the scaled gradients overflow when the largest, times the scale,
exceeds fp16's largest finite value 65,504 (65,504 itself still fits): the
step is skipped, the scale halved and the run of clean steps reset. A clean
step counts towards growth; after growth_interval clean steps in a row the
scale doubles and the count restarts (lesson mixed-precision, PyTorch's
GradScaler). The learner returns the scale after the last step. Hidden
sequences are drawn until every known slip ends at another scale, and each
holds a gradient that lands exactly on 65,504.
"""

from __future__ import annotations

import random

from grading_engine.checks.answers import float_answer
from grading_engine.checks.floats import capture_float
from grading_engine.checks.result import CheckResult
from grading_engine.exercises.kit.args import args_case, call_with_args

SLUG = "loss-scale"
ENTRY_POINT = "loss_scale"
SIGNATURE = "loss_scale(grad_maxes, init_scale, growth_interval) -> float"
_ARGS = ("grad_maxes", "init_scale", "growth_interval")

FP16_MAX = 65504.0
REL_TOL = 1e-12

HINTS = {
    "checked-unscaled-gradient": (
        "that never skips a step: what overflows is the SCALED gradient, "
        "grad x scale, not the gradient itself; skip when grad x scale > 65,504"
    ),
    "overflow-at-the-max": (
        "that skips a step whose scaled gradient is exactly 65,504: fp16's "
        "largest finite value fits, only values above it become inf"
    ),
    "scale-never-grows": (
        "that never raises the scale again: after growth_interval clean steps "
        "in a row the scaler doubles it, so it does not stay stuck after one "
        "large gradient"
    ),
    "streak-not-reset-on-overflow": (
        "an overflow ends the run of clean steps: set the count back to 0 "
        "when you skip, so growth needs growth_interval clean steps in a row"
    ),
    "streak-not-reset-on-growth": (
        "after doubling the scale the count of clean steps starts again "
        "from 0; otherwise the scale doubles on every later clean step"
    ),
}


def simulate(grad_maxes, init_scale, growth_interval, kind: str = "right") -> float:
    """The scale after the last step, or after one of the usual slips."""
    scale, clean = float(init_scale), 0
    for g in grad_maxes:
        scaled = g if kind == "checked-unscaled-gradient" else g * scale
        at_max_counts = kind == "overflow-at-the-max"
        if scaled > FP16_MAX or (at_max_counts and scaled == FP16_MAX):
            scale /= 2
            if kind != "streak-not-reset-on-overflow":
                clean = 0
            continue
        clean += 1
        if kind == "scale-never-grows":
            continue
        if clean >= growth_interval:
            scale *= 2
            if kind != "streak-not-reset-on-growth":
                clean = 0
    return scale


def reference(grad_maxes, init_scale, growth_interval) -> float:
    return simulate(grad_maxes, init_scale, growth_interval)


def _draw(rng: random.Random) -> dict:
    """A sequence in which every slip ends at its own scale (see module doc)."""
    for _ in range(1000):
        interval = rng.randint(2, 4)
        init = 2.0 ** rng.randint(10, 16)
        grads, scale = [], init
        for _ in range(rng.randint(10, 16)):
            roll = rng.random()
            if roll < 0.15:  # exactly at the limit: fits
                g = FP16_MAX / scale
            elif roll < 0.4:
                g = round(rng.uniform(1.2, 40.0), 3) * FP16_MAX / init  # overflows
            else:
                g = round(rng.uniform(0.001, 0.3), 4) * FP16_MAX / init / 4
            grads.append(g)
            scale = simulate(grads, init, interval)  # the next step's scale
        right = simulate(grads, init, interval)
        ends = [simulate(grads, init, interval, kind) for kind in HINTS]
        at_limit = any(
            g * simulate(grads[:i], init, interval) == FP16_MAX
            for i, g in enumerate(grads)
        )
        if at_limit and right not in ends and len(set(ends)) == len(ends):
            return dict(grad_maxes=grads, init_scale=init, growth_interval=interval)
    raise RuntimeError("no sequence separates the slips")  # pragma: no cover


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        args_case(_ARGS, "the lesson's run: two overflows, then growth", False,
                  grad_maxes=[0.5, 3.0, 3.0, 0.2, 0.2, 0.2, 0.2],
                  init_scale=65536.0, growth_interval=3),
        args_case(_ARGS, "a gradient exactly at the limit, then clean steps", False,
                  grad_maxes=[FP16_MAX / 65536, 0.5, 2.0, 0.1, 0.1, 0.1],
                  init_scale=65536.0, growth_interval=2),
    ]  # fmt: skip
    for i in range(2):
        cases.append(args_case(_ARGS, f"hidden run {i + 1}", True, **_draw(rng)))
    return cases


def run_case(fn, case: dict):
    return capture_float(call_with_args(fn, case, _ARGS)), {}


def _slips(args: dict) -> list[tuple[float, str, str]]:
    return [(simulate(**args, kind=kind), kind, hint) for kind, hint in HINTS.items()]


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    args = case["args"]
    return float_answer(
        case,
        data,
        "final scale",
        reference(**args),
        _slips(args),
        rel_tol=REL_TOL,
        spec=",.6g",
        float_hint="return the scale as a float",
    )
