"""The runner this process grades with, built once from settings, and a grade
with it.

Workers keep a warm pool (torch imported, reference models built) so a grade
costs milliseconds; one-shot callers such as `manage.py grade` use a cold
sandbox. Either refuses to start where the sandbox's protections are missing,
unless GRADER_ALLOW_UNSAFE_SANDBOX says otherwise (local development).
"""

from __future__ import annotations

import atexit
import threading

from django.conf import settings
from grading_engine.grading import Verdict, grade
from grading_engine.runner import CancelToken, Runner, Slow

from grader.authored import exercise_declaration
from grader.budgets import Budget, exercise_budget
from grader.models import Exercise

_lock = threading.Lock()
_runners: dict[str, Runner] = {}


def runner_get(kind: str | None = None) -> Runner:
    """Return this process's runner of `kind` ("pool" or "cold"), creating it once."""
    kind = kind or settings.GRADER_RUNNER
    with _lock:
        if kind not in _runners:
            from grading_engine.sandbox import make_runner

            runner = make_runner(
                kind=kind,
                allow_degraded=settings.GRADER_ALLOW_UNSAFE_SANDBOX,
                # Burst slots are slot workers too (forks of the same zygote).
                size=settings.GRADER_POOL_SIZE + settings.GRADER_BURST_SLOTS,
            )
            close = getattr(runner, "close", None)
            if close:
                atexit.register(close)
            _runners[kind] = runner
        return _runners[kind]


def exercise_grade(
    *,
    exercise: Exercise,
    code: str,
    seed: int | None = None,
    runner_kind: str | None = None,
    budget: Budget | None = None,
    cancel: CancelToken | None = None,
    slow: Slow | None = None,
) -> Verdict:
    """Grade `code` against `exercise` now, with this process's runner.

    The job gets the exercise's time budget (grader.budgets) unless `budget`
    is given; setting `cancel` stops it.
    """
    budget = budget or exercise_budget(exercise)
    return grade(
        declaration=exercise_declaration(exercise),
        harness=exercise.harness,
        code=code,
        entry_point=exercise.entry_point,
        runner=runner_get(runner_kind),
        seed=seed,
        timeout=budget.seconds,
        options=exercise.options,
        budget=budget.why,
        cancel=cancel,
        slow=slow,
    )
