"""Exercise rows to and from the content tree's exercise files.

The content layer parses content/exercises/*.yaml into ExerciseRecords and
writes them back; these functions are what it calls to store and read the
rows, through EXERCISE_STORE (quiz.content.exercise_store's protocol, named
in settings.EXERCISE_STORE).
"""

from __future__ import annotations

from pathlib import Path

from grader.authored import UNREAD, declaration_problems
from grader.models import Exercise
from grader.verify import exercise_is_verified, exercise_options_problems
from quiz.content.exercise_store import ExerciseStore
from quiz.content.models import Lesson
from quiz.content.tree import ExerciseRecord
from quiz.core.upsert import upsert


def exercise_upsert(*, record: ExerciseRecord, source_path: str) -> str:
    """Create or update an exercise from a parsed content record.

    Returns "created", "updated" or "unchanged" for the loader's report.
    """
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
        "right_solutions": record.right_solutions,
        "options": record.options,
        "declaration": record.declaration,
        "source_path": source_path,
    }
    outcome = upsert(Exercise, {"slug": record.slug}, values)
    exercise_forget_stale_budget(slug=record.slug)
    return outcome


def exercise_forget_stale_budget(*, slug: str) -> None:
    """Clear a measured budget that describes another version of the exercise.

    Its harness, solution or options changed since it was verified, so the
    next grade measures it again (grader.submission_grading).
    """
    exercise = Exercise.objects.get(slug=slug)
    measured = exercise.time_budget_seconds is not None
    if measured and not exercise_is_verified(exercise=exercise):
        Exercise.objects.filter(pk=exercise.pk).update(
            reference_ms=None, time_budget_seconds=None
        )


def exercise_records() -> list[ExerciseRecord]:
    """Every exercise, by slug, as the record its file is written from."""
    return [
        ExerciseRecord(
            path=Path(exercise.source_path),
            slug=exercise.slug,
            lesson=exercise.lesson.slug if exercise.lesson_id else None,
            title=exercise.title,
            harness=exercise.harness,
            entry_point=exercise.entry_point,
            signature=exercise.signature,
            prompt=exercise.prompt,
            starter=exercise.starter,
            solution=exercise.solution,
            wrong_solutions=exercise.wrong_solutions,
            right_solutions=exercise.right_solutions,
            options=exercise.options,
            declaration=exercise.declaration,
        )
        for exercise in Exercise.objects.select_related("lesson").order_by("slug")
    ]


def record_declaration_problems(*, record: ExerciseRecord) -> list[tuple[str, str]]:
    """Why a file's declaration cannot be graded, by the file's key (a path
    inside the declaration said from its key: declaration.cases[0]...)."""
    problems = declaration_problems(
        harness=record.harness,
        declaration=record.declaration,
        entry_point=record.entry_point,
        solution=record.solution,
        wrong_solutions=record.wrong_solutions,
        diagnoses=UNREAD,  # loaded with the same files (tests check them)
    )
    return [
        (key, f"declaration.{why}" if key == "declaration" else why)
        for key, why in problems
    ]


EXERCISE_STORE = ExerciseStore(
    options_problems=exercise_options_problems,
    declaration_problems=record_declaration_problems,
    upsert=exercise_upsert,
    records=exercise_records,
)
