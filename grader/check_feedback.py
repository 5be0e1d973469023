"""Stored checks explained for the exercise and submission pages.

A failed check that names a diagnosis gets its summary and the lessons that
teach it, by the rule review scheduling uses too (diagnosis_lessons): no
lessons listed means the exercise's own lesson.

Hints are progressive, so the page teaches before it gives the answer away:
first the concept (the diagnosis) and the failing fact; where to look (the
lessons) on request, or open after WHERE_AFTER_FAILURES failed attempts; the
fix a message ends with ("Assign the Parameter itself: a.b = c.d") only after
FIX_AFTER_FAILURES failed attempts or a pass. The API's JSON is unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from quiz.content.diagnoses import diagnoses_for, diagnosis_lessons

WHERE_AFTER_FAILURES = 2
FIX_AFTER_FAILURES = 4

# A closing sentence that hands over the code: a short lead-in, a colon, then
# a Python assignment ("Share it: model.lm_head.weight = model.transformer...").
_FIX = re.compile(
    r"(?:^|(?<=[.!?;]\s))"
    r"(?P<fix>[A-Z][^.:!?]{0,60}:\s*[A-Za-z_][\w.\[\]]*\s*=\s*[A-Za-z_][\w.\[\]()]*\.?)"
    r"\s*$"
)


@dataclass(frozen=True)
class HintLevel:
    """How much of the feedback one learner's attempts have earned."""

    failures: int
    passed: bool
    full: bool = False  # an instructor reading a learner's submission

    @property
    def where_open(self) -> bool:
        return self.full or self.passed or self.failures >= WHERE_AFTER_FAILURES

    @property
    def fix_shown(self) -> bool:
        return self.full or self.passed or self.failures >= FIX_AFTER_FAILURES

    @property
    def fix_after(self) -> int:
        return FIX_AFTER_FAILURES

    @property
    def fix_remaining(self) -> int:
        return max(FIX_AFTER_FAILURES - self.failures, 0)


def hint_level(*, failures: int, passed: bool, full: bool = False) -> HintLevel:
    """The hint level for a learner with `failures` failed graded attempts."""
    return HintLevel(failures=max(int(failures), 0), passed=bool(passed), full=full)


def split_fix(message: str) -> tuple[str, str]:
    """(the failing fact, the fix it ends with or "") of one check message."""
    text = str(message or "").rstrip()
    match = _FIX.search(text)
    if not match:
        return text, ""
    return text[: match.start("fix")].rstrip(), match.group("fix")


def checks_for_display(*, checks, fallback_lesson=None) -> list[dict]:
    """Stored checks plus, for a named mistake, its summary and lessons to review.

    A diagnosis without a row (or without lessons) points at the exercise's
    own lesson, the same rule review scheduling uses.
    """
    checks = [c for c in checks or [] if isinstance(c, dict)]
    slugs = {c.get("diagnosis") for c in checks if not c.get("passed")}
    rows = diagnoses_for(s for s in slugs if isinstance(s, str))
    shown = []
    first_with: dict[str, dict] = {}  # the failing fact -> its first check
    for check in checks:
        slug = check.get("diagnosis") if not check.get("passed") else None
        row = rows.get(slug) if isinstance(slug, str) else None
        lessons = diagnosis_lessons(row, fallback=fallback_lesson) if slug else []
        message = str(check.get("message", "") or "")
        fact, fix = split_fix(message)
        first = None
        if not check.get("passed") and message:
            # Several cases failing alike: the message once, with its cases.
            first = first_with.get(message)
        shown.append(
            {
                "name": check.get("name", ""),
                "passed": bool(check.get("passed")),
                "message": message,
                "fact": fact,
                "fix": fix,
                "repeat_of": first["name"] if first else "",
                "also": [],
                "expected": check.get("expected"),
                "got": check.get("got"),
                "hidden": bool(check.get("hidden")),
                "diagnosis": slug,
                "hint": row.summary if row else "",
                "lessons": lessons,
            }
        )
        if first:
            first["also"].append(shown[-1]["name"])
        elif not check.get("passed") and message:
            first_with[message] = shown[-1]
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
