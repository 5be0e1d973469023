"""A learner's submissions as their progress page, streak and export show them.

Registered into quiz.learning.exercise_progress by grader.hooks: learning
sits below the grader and cannot ask for submissions itself.
"""

from __future__ import annotations

from grader.models import Submission
from quiz.learning.data_export import iso_or_none
from quiz.learning.exercise_progress import ExerciseProgress


def exercises_passed_count(*, user) -> int:
    """Distinct exercises the learner has passed at least once."""
    return (
        Submission.objects.filter(user=user, status=Submission.Status.PASSED)
        .values("exercise_id")
        .distinct()
        .count()
    )


def submissions_export(*, user) -> list[dict]:
    """The learner's own submissions, code included, for their data export."""
    submissions = Submission.objects.filter(user=user).select_related("exercise")
    return [
        {
            "id": str(s.pk),
            "exercise": s.exercise.slug,
            "code": s.code,
            "status": s.status,
            "score": s.score,
            "checks": s.checks,
            "created_at": iso_or_none(s.created_at),
            "finished_at": iso_or_none(s.finished_at),
        }
        for s in submissions
    ]


EXERCISE_PROGRESS = ExerciseProgress(
    activity_model=Submission,
    activity_field="created_at",
    activity_label="exercise submissions",
    passed_count=exercises_passed_count,
    export_rows=submissions_export,
)
