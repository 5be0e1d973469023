"""How exercise submissions join a learner's progress, streak and data export.

Submissions belong to the grader, a layer above learning, so learning never
imports them. The grader provides an ExerciseProgress, named by dotted path
in settings.EXERCISE_PROGRESS (quiz.core.providers); the progress reads use
it when it is there and count no exercises when not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from quiz.core.providers import provider


@dataclass(frozen=True)
class ExerciseProgress:
    # A model with a `user` foreign key, and the datetime field that dates
    # each row as activity (the streak and the activity chart).
    activity_model: type
    activity_field: str
    activity_label: str
    # (user=) -> how many distinct exercises the learner has passed.
    passed_count: Callable[..., int]
    # (user=) -> the learner's submissions as plain data for their export.
    export_rows: Callable[..., list[dict]]
    # (user=) -> recent regrades that changed a verdict of theirs, each a
    # dict with exercise, old/new status and score, when, submission_id.
    regrade_notes: Callable[..., list[dict]] | None = None
    # (lesson=) -> the lesson's exercises learners may open (published, with
    # a verified version): a lesson never links to one that would 404.
    lesson_exercises: Callable[..., list] | None = None
    # () -> how many exercises a learner can pass (the "of N" on /progress/).
    total_count: Callable[[], int] | None = None


def exercise_progress() -> ExerciseProgress | None:
    return provider("EXERCISE_PROGRESS")
