"""loss-scale: the dynamic loss scale of fp16 mixed precision, step by step.

Each step, the scaled gradients overflow when the largest, times the scale,
exceeds fp16's largest finite value 65,504 (65,504 itself still fits): the
step is skipped, the scale halved and the run of clean steps reset. A clean
step counts towards growth; after growth_interval clean steps in a row the
scale doubles and the count restarts (lesson mixed-precision, PyTorch's
GradScaler). The learner returns the scale after the last step. Hidden
sequences are drawn until every known slip ends at another scale, and each
holds scaled gradients exactly on 65,504, just below and just above it. A
"hidden fixed run", the same every grade, ends at 8,192 where the slips that
ignore the scale, overflow at 65,504, keep the count across an overflow,
restart it at 1 or take 65,535 as the limit each end at a scale of their
own; a second one
ends on a doubling, which growth checked before the step is counted loses.
A third visible run overflows only at a doubled scale, which growth deferred
to the next clean step does not reach.
"""

from __future__ import annotations

import random

from grading_engine.checks.compared import float_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_float

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
    "grows-one-step-late": (
        "that doubles the scale one clean step late: double as soon as the "
        "run of clean steps REACHES growth_interval (count == growth_interval), "
        "not when it exceeds it"
    ),
    "wrong-fp16-max": (
        "that takes 65,535 (2**16 - 1, the largest uint16) as the limit: "
        "fp16's largest finite value is 65,504, and a scaled gradient just "
        "above it already overflows"
    ),
    "streak-not-reset-on-growth": (
        "after doubling the scale the count of clean steps starts again "
        "from 0; otherwise the scale doubles on every later clean step"
    ),
    "growth-checked-before-step": (
        "that checks for growth at the top of the loop, before the step is "
        "counted, so a doubling earned by the last clean step never happens: "
        "double in the same step whose clean count reaches growth_interval"
    ),
    "streak-restarts-at-one": (
        "after an overflow your count of clean steps restarts at 1, as if the "
        "skipped step were clean: it restarts at 0, so growth needs "
        "growth_interval clean steps after the overflow"
    ),
}
# Other ways to write a slip of HINTS: (kind, the slip it is).
OTHER_WAYS = {
    # The check for growth inside the clean branch, before the count: the
    # doubling waits for the next CLEAN step (an overflow there drops it).
    "growth-on-next-clean-step": "growth-checked-before-step",
}
# Every wrong computation: (kind for simulate, the slip of HINTS it is).
_WAYS = [(kind, kind) for kind in HINTS] + list(OTHER_WAYS.items())


def simulate(grad_maxes, init_scale, growth_interval, kind: str = "right") -> float:
    """The scale after the last step, or after one of the usual slips."""
    state = (float(init_scale), 0)
    for g in grad_maxes:
        state = _step(state, g, growth_interval, kind)
    return state[0]


def _step(state, g, growth_interval, kind: str) -> tuple[float, int]:
    """One step: (scale, clean steps) before it and its gradient's max ->
    (scale, clean steps) after it."""
    scale, clean = state
    limit = 65535.0 if kind == "wrong-fp16-max" else FP16_MAX
    late = 1 if kind == "grows-one-step-late" else 0
    deferred = kind == "growth-checked-before-step"  # at the next step's top
    on_next_clean = kind == "growth-on-next-clean-step"
    if deferred and clean == growth_interval:
        scale, clean = scale * 2, 0
    scaled = g if kind == "checked-unscaled-gradient" else g * scale
    at_max_counts = kind == "overflow-at-the-max"
    if scaled > limit or (at_max_counts and scaled == FP16_MAX):
        if kind != "streak-not-reset-on-overflow":
            clean = 1 if kind == "streak-restarts-at-one" else 0
        return scale / 2, clean
    if on_next_clean and clean == growth_interval:
        scale, clean = scale * 2, 0
    clean += 1
    if kind == "scale-never-grows" or deferred or on_next_clean:
        return scale, clean
    if clean >= growth_interval + late:
        scale *= 2
        if kind != "streak-not-reset-on-growth":
            clean = 0
    return scale, clean


def reference(grad_maxes, init_scale, growth_interval) -> float:
    return simulate(grad_maxes, init_scale, growth_interval)


_FIRST = (
    "checked-unscaled-gradient",
    "overflow-at-the-max",
    "scale-never-grows",
    "streak-not-reset-on-overflow",
    "streak-not-reset-on-growth",
)
_SECOND = ("grows-one-step-late", "wrong-fp16-max")


def _draw(rng: random.Random, unique: tuple[str, ...] = _FIRST) -> dict:
    """A sequence that every slip gets wrong, in which each slip of `unique`
    ends at a scale of its own (a final scale is a power of two, so the
    hidden runs share the slips out: see make_cases)."""
    for _ in range(5000):
        interval = rng.randint(2, 4)
        init = 2.0 ** rng.randint(10, 16)
        grads, state, before = [], (init, 0), []  # before[i]: the scale step i met
        for _ in range(rng.randint(10, 16)):
            scale = state[0]
            before.append(scale)
            roll = rng.random()
            if roll < 0.12:  # exactly at the limit: fits
                g = FP16_MAX / scale
            elif roll < 0.22:  # just above the limit (below 65,535): overflows
                g = (FP16_MAX + rng.randint(1, 30)) / scale
            elif roll < 0.3:  # just below the limit: fits
                g = (FP16_MAX - rng.randint(1, 30)) / scale
            elif roll < 0.5:
                g = round(rng.uniform(1.2, 40.0), 3) * FP16_MAX / init  # overflows
            else:
                g = round(rng.uniform(0.001, 0.3), 4) * FP16_MAX / init / 4
            grads.append(g)
            state = _step(state, g, interval, "right")
        scaled = [g * met for g, met in zip(grads, before, strict=True)]
        # At, just below and just above 65,504, in every draw.
        at_limit = FP16_MAX in scaled
        below = any(FP16_MAX - 30 <= x < FP16_MAX for x in scaled)
        above = any(FP16_MAX < x <= FP16_MAX + 30 for x in scaled)
        # Run 2 (the new slips) holds all three; run 1 at least the limit.
        edges = at_limit and (unique == _FIRST or (below and above))
        if not edges:
            continue  # cheap to tell; the slips' ends are not
        right = state[0]  # the scale after the last step
        if not _apart(grads, init, interval, unique, right):
            continue
        ends = {kind: simulate(grads, init, interval, kind) for kind, _ in _WAYS}
        separated = all(
            list(ends.values()).count(ends[kind]) == 1 and ends[kind] != right
            for kind in unique
        )
        if separated:
            return dict(grad_maxes=grads, init_scale=init, growth_interval=interval)
    raise RuntimeError("no sequence separates the slips")  # pragma: no cover


def _apart(grads, init, interval, unique, right) -> bool:
    """Whether the slips of `unique` end apart from the right scale and from
    each other: most sequences fail here, before the other slips are run
    (the full test in _draw then decides, so the draws are the same)."""
    ends = set()
    for kind in unique:
        end = simulate(grads, init, interval, kind)
        if end == right or end in ends:
            return False
        ends.add(end)
    return True


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        args_case(_ARGS, "the lesson's run: two overflows, then growth", False,
                  grad_maxes=[0.5, 3.0, 3.0, 0.2, 0.2, 0.2, 0.2],
                  init_scale=65536.0, growth_interval=3),
        args_case(_ARGS, "a gradient exactly at the limit, then clean steps", False,
                  grad_maxes=[FP16_MAX / 65536, 0.5, 2.0, 0.1, 0.1, 0.1],
                  init_scale=65536.0, growth_interval=2),
        # Step 3's gradient fits 65,536 but overflows the doubled 131,072:
        # growth checked only on the next clean step lets it through, and
        # growth after growth_interval + 1 clean steps ends elsewhere. Both
        # end at 65,536 on the run above: visible, so the client names them.
        args_case(_ARGS, "a doubling, then a gradient only the doubled scale "
                  "overflows", False,
                  grad_maxes=[2.0**-6, 2.0**-6, 0.75, 2.0**-6, 2.0**-6, 0.375,
                              2.0**-6],
                  init_scale=65536.0, growth_interval=2),
        # Values no draw changes: 65,520 overflows (65,535 is no limit), the
        # limit itself fits, and the clean steps around two overflows only grow
        # the scale when the count restarts at each overflow.
        args_case(_ARGS, "hidden fixed run", True,
                  grad_maxes=[2.0**-6, 65520 / 65536, FP16_MAX / 32768, 64.0,
                              2.0**-6, 64.0, 2.0**-6],
                  init_scale=65536.0, growth_interval=2),
        # The last clean step earns a doubling, which a check for growth at
        # the top of the loop never applies (the draws may not end on one).
        args_case(_ARGS, "hidden fixed run ending on a doubling", True,
                  grad_maxes=[2.0**-6, 2.0**-6, 64.0, 2.0**-6, 2.0**-6],
                  init_scale=65536.0, growth_interval=2),
    ]  # fmt: skip
    for i, unique in enumerate((_FIRST, _SECOND)):
        cases.append(
            args_case(_ARGS, f"hidden run {i + 1}", True, **_draw(rng, unique))
        )
    return cases


run_case = returns_float(_ARGS)


def _slips(args: dict) -> list[tuple[float, str, str]]:
    return [(simulate(**args, kind=kind), slip, HINTS[slip]) for kind, slip in _WAYS]


check_case = float_compared(
    "final scale",
    rel_tol=REL_TOL,
    spec=",.6g",
    float_hint="return the scale as a float",
)
