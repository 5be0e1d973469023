"""A learner's submissions as their progress page, streak and export show them.

EXERCISE_PROGRESS is quiz.learning.exercise_progress's protocol, named in
settings.EXERCISE_PROGRESS: learning sits below the grader and cannot ask
for submissions itself.
"""

from __future__ import annotations

from grader.models import Submission
from grader.selectors import exercise_list
from quiz.learning.data_export import iso_or_none
from quiz.learning.exercise_progress import ExerciseProgress


def exercises_passed_count(*, user) -> int:
    """Distinct published exercises the learner has passed at least once
    (published, so it never exceeds exercises_total_count)."""
    return (
        Submission.objects.filter(
            user=user, status=Submission.Status.PASSED, exercise__published=True
        )
        .values("exercise_id")
        .distinct()
        .count()
    )


def exercises_total_count() -> int:
    """Exercises a learner can pass: the published ones."""
    return exercise_list().count()


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


def regrade_notes(*, user) -> list[dict]:
    """Regrades of the last 30 days that changed one of the learner's verdicts."""
    from grader.regrade_grading import changed_for_learner

    return [
        {
            "exercise": r.submission.exercise.title,
            "old_status": r.old_status,
            "new_status": r.new_status,
            "old_score": r.old_score,
            "new_score": r.new_score,
            "when": r.finished_at,
            "submission_id": r.submission_id,
        }
        for r in changed_for_learner(user=user)
    ]


def lesson_exercises(*, lesson) -> list:
    """The lesson's exercises a learner can open, in the exercise list's order."""
    return list(exercise_list().filter(lesson=lesson))


EXERCISE_PROGRESS = ExerciseProgress(
    activity_model=Submission,
    activity_field="created_at",
    activity_label="exercise submissions",
    passed_count=exercises_passed_count,
    export_rows=submissions_export,
    regrade_notes=regrade_notes,
    lesson_exercises=lesson_exercises,
    total_count=exercises_total_count,
)
