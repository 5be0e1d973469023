"""Reads for exercises and submissions, with visibility rules in one place."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from grader.models import Exercise, Submission
from quiz.models import CohortMembership


def exercise_list() -> QuerySet[Exercise]:
    return Exercise.objects.filter(published=True).select_related("lesson")


def exercise_get(*, slug: str) -> Exercise:
    return exercise_list().get(slug=slug)


def submissions_visible_to(user) -> QuerySet[Submission]:
    """Everyone sees their own; instructors also see the submissions of learners
    in cohorts they own (a subquery, so no duplicate rows); superusers see all."""
    qs = Submission.objects.select_related("exercise")
    if not user.is_authenticated:
        return qs.none()
    if user.is_superuser:
        return qs
    taught = CohortMembership.objects.filter(cohort__owner=user).values("user_id")
    return qs.filter(Q(user=user) | Q(user_id__in=taught))


def submission_get(*, user, submission_id) -> Submission:
    return submissions_visible_to(user).get(pk=submission_id)


def submission_queue_position(submission: Submission) -> int | None:
    """The submission's place among its owner's own queued submissions.

    1 = the owner's next one to be graded; None once a worker has it. Only
    the owner's rows are counted: a global position would tell every learner
    how many submissions everyone else has waiting (how busy the course is,
    when a classmate is working). With SUBMISSION_MAX_OUTSTANDING per learner
    it is a small number that says which of your submissions goes first.
    """
    if submission.status != Submission.Status.QUEUED:
        return None
    ahead = Submission.objects.filter(
        user_id=submission.user_id,
        status=Submission.Status.QUEUED,
        created_at__lt=submission.created_at,
    ).count()
    return ahead + 1


def submission_gradescope(submission: Submission) -> dict:
    """The submission in Gradescope's results.json shape (one point per check)."""
    tests = [
        {
            "name": check["name"],
            "score": 1.0 if check["passed"] else 0.0,
            "max_score": 1.0,
            "status": "passed" if check["passed"] else "failed",
            "output": check.get("message", ""),
            "visibility": "after_published" if check.get("hidden") else "visible",
        }
        for check in submission.checks
    ]
    output = f"{submission.exercise.slug}: {submission.status}"
    if submission.stdout:
        output += f"\n\nYour code printed:\n{submission.stdout}"
    return {
        "score": sum(t["score"] for t in tests),
        "execution_time": round(submission.grade_ms / 1000, 3)
        if submission.grade_ms
        else None,
        "output": output,
        "tests": tests,
    }
