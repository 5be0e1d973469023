"""Writes for exercises and grading (reads live in selectors.py)."""

from __future__ import annotations

from grader.models import Exercise
from quiz.upsert import upsert


def exercise_upsert(*, record, source_path: str) -> str:
    """Create or update an exercise from a parsed content record.

    Returns "created", "updated" or "unchanged" for the loader's report.
    """
    from quiz.models import Lesson

    lesson = Lesson.objects.get(slug=record.lesson) if record.lesson else None
    values = {
        "lesson": lesson,
        "title": record.title.strip(),
        "harness": record.harness,
        "entry_point": record.entry_point,
        "signature": record.signature.strip(),
        "prompt": record.prompt,
        "starter": record.starter,
        "solution": record.solution,
        "wrong_solutions": record.wrong_solutions,
        "source_path": source_path,
    }
    return upsert(Exercise, {"slug": record.slug}, values)
