"""Verify an exercise: its reference solution must pass its own checks.

An exercise authored in the admin is only as good as its harness, entry point
and solution agreeing with each other; grading the solution like a learner's
submission is the cheapest proof. A failure unpublishes the exercise, so
learners never meet one that nobody can pass.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import math
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from grading_engine.authored import DeclarationError
from grading_engine.exercises.base import load_harness
from grading_engine.grading import grade

from grader import budgets
from grader.authored import AUTHORED, exercise_declaration
from grader.models import Exercise
from grader.process_runner import runner_get
from quiz.core.audit import Action, audit_changes, audit_record, audit_snapshot

log = logging.getLogger(__name__)

# Fixed so that a verification is reproducible: the same inputs always draw
# the same cases, and a re-run tells you about the exercise, not the dice.
VERIFY_SEED = 1_234_567
MAX_FAILED_LISTED = 20
MAX_MESSAGE_CHARS = 500
MAX_VALUE_CHARS = 300  # a failed check's expected and got, shown to authors
# The only overrides the exercise row may carry. Harnesses keep their
# tolerances as module constants (RTOL, ATOL); one that defines them accepts
# these keys, the others accept none.
TOLERANCE_KEYS = {"rtol": "RTOL", "atol": "ATOL"}


@dataclass(frozen=True)
class VerifyOutcome:
    passed: bool
    verification: dict

    @property
    def failed(self) -> list[dict]:
        return self.verification.get("failed", [])

    def summary(self, limit: int = 3) -> str:
        """The first failed checks, for an admin message."""
        lines = [f"{item['name']}: {item['message']}" for item in self.failed]
        text = "; ".join(lines[:limit]) or self.verification.get("status", "")
        hidden = self.verification.get("failed_count", len(lines)) - limit
        return text + (f" (and {hidden} more)" if hidden > 0 else "")


def harness_option_keys(*, harness: str) -> set[str]:
    """The option keys `harness` accepts: its tolerances, and budget and lane."""
    module = load_harness(harness)
    tolerances = {k for k, const in TOLERANCE_KEYS.items() if hasattr(module, const)}
    return tolerances | {budgets.BUDGET_OPTION, budgets.LANE_OPTION}


def exercise_options_problems(*, harness: str, options) -> list[str]:
    """Why `options` cannot go with `harness`; empty when they can."""
    if not isinstance(options, dict):
        return ['options must be a JSON object such as {"rtol": 1e-4}']
    if not options:
        return []
    try:
        allowed = harness_option_keys(harness=harness)
    except LookupError as exc:
        return [str(exc)]
    problems = budgets.budget_options_problems(options)
    for key, value in options.items():
        if key not in allowed:
            accepted = ", ".join(sorted(allowed)) or "none"
            problems.append(
                f"unknown option {key!r} for harness {harness!r} (accepted: {accepted})"
            )
        elif key in (budgets.BUDGET_OPTION, budgets.LANE_OPTION):
            continue
        elif (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not 0 <= value <= 1
        ):
            problems.append(f"option {key!r} must be a number from 0 to 1")
    return problems


def exercise_fingerprint(*, exercise: Exercise) -> str:
    """Hash of everything a verification depends on, harness code included.

    A stored verification whose fingerprint differs describes another version
    of the exercise and proves nothing about this one.
    """
    digest = hashlib.sha256()
    try:
        digest.update(inspect.getsource(load_harness(exercise.harness)).encode())
    except (LookupError, OSError, TypeError):
        digest.update(b"<no harness>")
    parts = [exercise.harness, exercise.entry_point, exercise.solution]
    parts.append(json.dumps(exercise.options or {}, sort_keys=True))
    if exercise.harness == AUTHORED:  # its checks and mistakes are data
        parts.append(json.dumps(exercise.declaration, sort_keys=True))
        parts.append(json.dumps(exercise.wrong_solutions, sort_keys=True))
    for part in parts:
        digest.update(b"\0" + (part or "").encode())
    return digest.hexdigest()


def exercise_is_verified(*, exercise: Exercise) -> bool:
    """True when the stored verification passed for the exercise as it is now."""
    stored = exercise.verification or {}
    return stored.get("status") == "passed" and stored.get(
        "fingerprint"
    ) == exercise_fingerprint(exercise=exercise)


def _failure(status: str, name: str, message: str) -> dict:
    return {
        "status": status,
        "score": 0.0,
        "failed": [{"name": name, "message": message}],
    }


def _grade_solution(
    exercise: Exercise, runner, repeats: int = 1, code: str | None = None
) -> dict:
    """Grade `code` (the reference solution by default) as a learner's would be."""
    try:
        load_harness(exercise.harness)
        declaration = exercise_declaration(exercise)
    except LookupError as exc:
        return _failure("error", "harness", str(exc))
    except DeclarationError as exc:
        return _failure("error", "declaration", str(exc))
    if runner is None:
        from grading_engine.sandbox import SandboxUnavailable

        try:
            # Cold, like manage.py grade: a one-off check must not make the
            # web process hold a warm pool of GPT-2 models.
            runner = runner_get("cold")
        except SandboxUnavailable as exc:
            return _failure("error", "sandbox", f"the grader cannot run here: {exc}")
    durations = []
    try:
        for _ in range(repeats):
            verdict = grade(
                declaration=declaration,
                harness=exercise.harness,
                code=exercise.solution if code is None else code,
                entry_point=exercise.entry_point,
                runner=runner,
                seed=VERIFY_SEED,
                timeout=settings.GRADER_TIMEOUT_SECONDS,
                options=exercise.options,
            )
            # CPU time where the runner measures it: what the job costs,
            # whatever else the machine is doing (wall time otherwise).
            cpu_ms = verdict.cpu_ms
            durations.append(verdict.duration_ms if cpu_ms is None else cpu_ms)
            if verdict.status != "passed":
                break
    except Exception as exc:  # noqa: BLE001 - reported to the author, not raised
        return _failure("error", "grader", f"{type(exc).__name__}: {exc}"[:500])
    failed = [
        {
            "name": check.name,
            "message": check.message[:MAX_MESSAGE_CHARS],
            # The values, so an author sees what the comparison saw.
            **{
                key: value[:MAX_VALUE_CHARS]
                for key in ("expected", "got")
                if isinstance(value := getattr(check, key), str)
            },
        }
        for check in verdict.checks
        if not check.passed
    ]
    return {
        "status": verdict.status,
        "score": verdict.score,
        "checks": len(verdict.checks),
        "failed": failed[:MAX_FAILED_LISTED],
        "failed_count": len(failed),
        # The mistakes the checks named (verifying a known wrong solution
        # of an authored exercise asks for its own).
        "diagnoses": sorted(
            {c.diagnosis for c in verdict.checks if not c.passed and c.diagnosis}
        ),
        # The cheapest run: what the job costs, not what a busy moment added.
        "duration_ms": round(min(durations), 1),
        "clock": "cpu" if verdict.cpu_ms is not None else "wall",
    }


def exercise_verify(
    *, exercise: Exercise, runner=None, save: bool = True, repeats: int = 1
) -> VerifyOutcome:
    """Grade the reference solution and record the result on `exercise`.

    Passing sets `verified_at` and the measured time budget (the fastest of
    `repeats` runs); failing clears both and unpublishes the exercise. With
    `save=False` only the instance is changed (the admin saves it with the
    rest of the form).
    """
    result = _grade_solution(exercise, runner, repeats)
    return _record(exercise, result, save=save)


def exercise_measure(*, exercise: Exercise, runner, repeats: int = 3) -> bool:
    """Measure a live exercise's budget, as a worker does before grading it.

    A passing reference is recorded exactly as by exercise_verify; a failure
    changes nothing: a busy or broken moment in a worker must not unpublish
    an exercise learners are using (authors see failures when they verify,
    in the admin or with `verify_exercises`). Returns whether it measured.
    """
    result = _grade_solution(exercise, runner, repeats)
    if result["status"] != "passed":
        outcome = VerifyOutcome(passed=False, verification=result)
        log.warning("cannot measure %s: %s", exercise.slug, outcome.summary())
        return False
    _record(exercise, result, save=True)
    return True


def _record(exercise: Exercise, result: dict, *, save: bool) -> VerifyOutcome:
    passed = result["status"] == "passed"
    now = timezone.now()
    exercise.verification = {
        **result,
        "seed": VERIFY_SEED,
        "fingerprint": exercise_fingerprint(exercise=exercise),
        "checked_at": now.isoformat(),
    }
    exercise.verified_at = now if passed else None
    exercise.reference_ms = result["duration_ms"] if passed else None
    exercise.time_budget_seconds = (
        budgets.budget_from_reference(exercise.reference_ms) if passed else None
    )
    if not passed:
        exercise.published = False
    if save and exercise.pk is not None:
        with transaction.atomic():
            exercise.save(
                update_fields=[
                    "verification",
                    "verified_at",
                    "published",
                    "reference_ms",
                    "time_budget_seconds",
                ]
            )
    return VerifyOutcome(passed=passed, verification=exercise.verification)


def exercise_verify_audited(*, exercise: Exercise, actor) -> VerifyOutcome:
    """exercise_verify, with what it changed on the row in the audit trail.

    `actor` is the admin who asked, or None for a command.
    """
    before = audit_snapshot(exercise)
    outcome = exercise_verify(exercise=exercise)
    changes = audit_changes(old=before, new=audit_snapshot(exercise))
    if changes:
        audit_record(
            actor=actor, action=Action.UPDATE, instance=exercise, changes=changes
        )
    return outcome


def solution_grade(*, exercise: Exercise, runner=None, code: str | None = None):
    """Grade `code` (default: the reference) against an exercise, saved or not.

    Returns the verification dict (status, score, failed checks, duration);
    grader.versions uses it on a draft that is not the live row.
    """
    return _grade_solution(exercise, runner, 1, code)


def verification_apply(*, exercise: Exercise, result: dict) -> VerifyOutcome:
    """Record a passing `result` on the instance (budget included), unsaved."""
    return _record(exercise, result, save=False)
