"""Each exercise's time budget and grading lane, measured when it is verified.

A global limit (GRADER_TIMEOUT_SECONDS, 60 s) lets one `while True:` hold a
grading slot for a minute although most references finish in a tenth of a
second. So verification measures the reference solution in the sandbox
(the CPU time its job used, start-up excluded) and the budget is

    max(BUDGET_FLOOR_SECONDS, BUDGET_FACTOR × reference), capped by
    GRADER_TIMEOUT_SECONDS, rounded up to 0.1 s.

Budgets are CPU seconds, measured and enforced (grading_engine.sandbox.
job_clock): a busy machine at a deadline slows a grade's wall clock, not
the CPU time it needs, so it neither changes a verdict nor, measured then,
inflates the stored budget or moves the exercise to the heavy lane. A
wall-clock backstop (three times the budget, at least 5 s more) still stops
code that waits. Ten times the reference leaves room for a correct but
plainer solution; the 1.5 s floor covers start-up costs. (Twenty times and
2 s, the first idea, gave tie-weights 2.2 s: four learners' loops ahead of a
right answer then hold both slots of a 2-core worker for 4.4 s before it can
start.) An exercise's options
may set `time_budget_seconds` (and `lane`) instead. The lane keeps
expensive exercises from occupying every slot: an exercise is "heavy" when
its budget is above LIGHT_LANE_MAX_SECONDS, or when its options say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings

from grader.models import Exercise

BUDGET_FLOOR_SECONDS = 1.5
BUDGET_FACTOR = 10
LIGHT_LANE_MAX_SECONDS = 4.0
LIGHT, HEAVY = Exercise.Lane.LIGHT, Exercise.Lane.HEAVY
# Option keys every harness accepts (next to its own tolerance keys).
BUDGET_OPTION = "time_budget_seconds"
LANE_OPTION = "lane"
MIN_BUDGET_SECONDS = 0.5
UNMEASURED = "the course-wide limit: this exercise is not measured yet"


def budget_from_reference(reference_ms: float) -> float:
    """The budget for a reference that runs in `reference_ms` in the sandbox."""
    seconds = max(BUDGET_FLOOR_SECONDS, BUDGET_FACTOR * reference_ms / 1000)
    return min(math.ceil(seconds * 10) / 10, float(settings.GRADER_TIMEOUT_SECONDS))


@dataclass(frozen=True)
class Budget:
    seconds: float  # of CPU time
    why: str  # for the exercise page and the time-limit message

    @property
    def label(self) -> str:
        return f"{self.seconds:g} s of CPU time"


def exercise_budget(exercise: Exercise) -> Budget:
    """The budget a grade of `exercise` gets now, and where it comes from."""
    cap = float(settings.GRADER_TIMEOUT_SECONDS)
    override = (exercise.options or {}).get(BUDGET_OPTION)
    if override is not None:
        return Budget(min(float(override), cap), "set for this exercise")
    if exercise.time_budget_seconds is not None and exercise.reference_ms is not None:
        return Budget(
            min(exercise.time_budget_seconds, cap),
            f"{BUDGET_FACTOR}× the reference solution's "
            f"{exercise.reference_ms / 1000:.2f} s of CPU time, at least "
            f"{BUDGET_FLOOR_SECONDS:g} s",
        )
    return Budget(cap, UNMEASURED)


SLOW_AFTER_SECONDS = 0.5
SLOW_AFTER_FACTOR = 4


def slow_after(exercise: Exercise) -> float:
    """When a grade of `exercise` counts as running long (a likely loop).

    Four times the reference, at least half a second, in CPU time: a right
    answer is done by then, so it is never the one demoted (grader.lanes).
    """
    reference = (exercise.reference_ms or 0) / 1000
    return max(SLOW_AFTER_SECONDS, SLOW_AFTER_FACTOR * reference)


def needs_measuring(exercise: Exercise) -> bool:
    """Never measured (or the measurement was cleared) and no budget set."""
    override = BUDGET_OPTION in (exercise.options or {})
    return exercise.time_budget_seconds is None and not override


def exercise_lane(exercise: Exercise) -> str:
    """ "light" or "heavy"; unmeasured exercises count as light until measured."""
    chosen = (exercise.options or {}).get(LANE_OPTION)
    if chosen in (LIGHT, HEAVY):
        return chosen
    measured = exercise.time_budget_seconds
    return (
        HEAVY if measured is not None and measured > LIGHT_LANE_MAX_SECONDS else LIGHT
    )


def budget_options_problems(options: dict) -> list[str]:
    """Why the budget keys in `options` are invalid; empty when they are fine."""
    problems = []
    if BUDGET_OPTION in options:
        value = options[BUDGET_OPTION]
        cap = settings.GRADER_TIMEOUT_SECONDS
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not MIN_BUDGET_SECONDS <= value <= cap
        ):
            problems.append(
                f"option {BUDGET_OPTION!r} must be a number of seconds from "
                f"{MIN_BUDGET_SECONDS:g} to {cap} (GRADER_TIMEOUT_SECONDS)"
            )
    if LANE_OPTION in options and options[LANE_OPTION] not in (LIGHT, HEAVY):
        problems.append(f'option {LANE_OPTION!r} must be "{LIGHT}" or "{HEAVY}"')
    return problems
