"""Who may see a quiz or an attempt: one rule for the pages and the API.

A quiz answers to its cohort's instructors and superusers (all of it) and
to the cohort's members while it is not archived (what a learner sees);
an attempt answers only to its own learner. Anyone else gets "no such".
"""

from __future__ import annotations

from quiz.core.params import id_in_range
from quiz.teaching import selectors as sel
from quiz.teaching.models import CohortMembership
from quiz.teaching.quizzes.models import Quiz, QuizAttempt


def teaches(user, quiz: Quiz) -> bool:
    if user.is_superuser:
        return True
    return sel.cohorts_taught_ids(user).filter(pk=quiz.cohort_id).exists()


def quiz_taught(user, quiz_id: int) -> Quiz | None:
    """The quiz if `user` teaches its cohort (or is a superuser)."""
    if not id_in_range(quiz_id):
        return None
    qs = Quiz.objects.select_related("cohort")
    if not user.is_superuser:
        qs = qs.filter(cohort_id__in=sel.cohorts_taught_ids(user))
    return qs.filter(pk=quiz_id).first()


def quiz_seen(user, quiz_id: int) -> tuple[Quiz, bool] | None:
    """(quiz, whether `user` teaches it) for a teacher or a member; else None."""
    if not id_in_range(quiz_id):
        return None
    quiz = Quiz.objects.select_related("cohort").filter(pk=quiz_id).first()
    if quiz is None:
        return None
    if teaches(user, quiz):
        return quiz, True
    member = CohortMembership.objects.filter(cohort=quiz.cohort, user=user)
    if quiz.archived_at is not None or not member.exists():
        return None
    return quiz, False


def attempt_own(user, attempt_id: int) -> QuizAttempt | None:
    if not id_in_range(attempt_id):
        return None
    return (
        QuizAttempt.objects.select_related("quiz", "quiz__cohort")
        .filter(pk=attempt_id, learner=user)
        .first()
    )
