"""Reads for the exercise and submission pages, in a fixed number of queries."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Count, Q

from grader.diagnoses import diagnoses_for
from grader.models import Exercise, Submission

Status = Submission.Status
GRADED = (Status.PASSED, Status.FAILED)  # an `error` was the grader's fault


@dataclass(frozen=True)
class SolutionAccess:
    """Whether the reference solution is shown, and why (for the page's note)."""

    passed: bool
    graded: int
    needed: int

    @property
    def shown(self) -> bool:
        return self.passed or self.graded >= self.needed

    @property
    def remaining(self) -> int:
        return max(self.needed - self.graded, 0)


def solution_access(*, user, exercise: Exercise) -> SolutionAccess:
    """Shown after a pass or after SOLUTION_AFTER_ATTEMPTS graded attempts."""
    needed = settings.SOLUTION_AFTER_ATTEMPTS
    if not user.is_authenticated:
        return SolutionAccess(passed=False, graded=0, needed=needed)
    counts = Submission.objects.filter(user=user, exercise=exercise).aggregate(
        passed=Count("pk", filter=Q(status=Status.PASSED)),
        graded=Count("pk", filter=Q(status__in=GRADED)),
    )
    return SolutionAccess(
        passed=counts["passed"] > 0, graded=counts["graded"], needed=needed
    )


def attempt_history(*, user, exercise: Exercise, limit: int = 20) -> list[Submission]:
    """The learner's own latest attempts (never another learner's, even for admins)."""
    if not user.is_authenticated:
        return []
    return list(
        Submission.objects.filter(user=user, exercise=exercise)
        .only("pk", "status", "score", "checks", "created_at", "exercise_id")
        .order_by("-created_at")[:limit]
    )


def checks_for_display(*, checks, fallback_lesson=None) -> list[dict]:
    """Stored checks plus, for a named mistake, its summary and lessons to review.

    A diagnosis without a row (or without lessons) points at the exercise's
    own lesson, the same rule review scheduling uses.
    """
    checks = [c for c in checks or [] if isinstance(c, dict)]
    slugs = {c.get("diagnosis") for c in checks if not c.get("passed")}
    rows = diagnoses_for(s for s in slugs if isinstance(s, str))
    shown = []
    for check in checks:
        slug = check.get("diagnosis") if not check.get("passed") else None
        row = rows.get(slug) if isinstance(slug, str) else None
        lessons = list(row.lessons.all()) if row else []
        if slug and not lessons and fallback_lesson is not None:
            lessons = [fallback_lesson]
        shown.append(
            {
                "name": check.get("name", ""),
                "passed": bool(check.get("passed")),
                "message": check.get("message", ""),
                "expected": check.get("expected"),
                "got": check.get("got"),
                "hidden": bool(check.get("hidden")),
                "diagnosis": slug,
                "hint": row.summary if row else "",
                "lessons": lessons,
            }
        )
    return shown


def mistakes_from(checks: list[dict]) -> list[dict]:
    """Each distinct diagnosis once, in check order: several cases of one
    exercise usually fail for the same reason, and saying it once reads better.
    """
    seen: dict[str, dict] = {}
    for check in checks:
        slug = check["diagnosis"]
        if slug and slug not in seen:
            seen[slug] = {
                "diagnosis": slug,
                "hint": check["hint"],
                "lessons": check["lessons"],
                "count": 0,
            }
        if slug:
            seen[slug]["count"] += 1
    return list(seen.values())
