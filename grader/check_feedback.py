"""Stored checks explained for the exercise and submission pages.

A failed check that names a diagnosis gets its summary and the lessons that
teach it, by the rule review scheduling uses too (diagnosis_lessons): no
lessons listed means the exercise's own lesson.
"""

from __future__ import annotations

from quiz.content.diagnoses import diagnoses_for, diagnosis_lessons


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
        lessons = diagnosis_lessons(row, fallback=fallback_lesson) if slug else []
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
