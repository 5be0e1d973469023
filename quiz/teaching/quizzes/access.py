"""Who may see a quiz or an attempt: one rule for the pages and the API.

A quiz answers to its cohort's instructors and superusers (all of it) and
to the cohort's members while it is not archived (what a learner sees);
an attempt answers only to its own learner. Anyone else gets Http404
("no such"), which the API turns into a JSON 404 with the same words.
"""

from __future__ import annotations

from django.http import Http404

from quiz.core.params import id_in_range
from quiz.teaching import selectors as sel
from quiz.teaching.models import CohortMembership
from quiz.teaching.quizzes.models import Quiz, QuizAttempt


def teaches(user, quiz: Quiz) -> bool:
    if user.is_superuser:
        return True
    return sel.cohorts_taught_ids(user).filter(pk=quiz.cohort_id).exists()


def quiz_taught(user, quiz_id: int) -> Quiz:
    """The quiz if `user` teaches its cohort (or is a superuser)."""
    qs = Quiz.objects.select_related("cohort")
    if not user.is_superuser:
        qs = qs.filter(cohort_id__in=sel.cohorts_taught_ids(user))
    quiz = qs.filter(pk=quiz_id).first() if id_in_range(quiz_id) else None
    if quiz is None:
        raise Http404("No such quiz.")
    return quiz


def quiz_seen(user, quiz_id: int) -> tuple[Quiz, bool]:
    """(quiz, whether `user` teaches it) for a teacher or a member."""
    quiz = None
    if id_in_range(quiz_id):
        quiz = Quiz.objects.select_related("cohort").filter(pk=quiz_id).first()
    if quiz is not None and teaches(user, quiz):
        return quiz, True
    if (
        quiz is None
        or quiz.archived_at is not None
        or not CohortMembership.objects.filter(cohort=quiz.cohort, user=user).exists()
    ):
        raise Http404("No such quiz.")
    return quiz, False


def attempt_own(user, attempt_id: int) -> QuizAttempt:
    attempt = None
    if id_in_range(attempt_id):
        attempt = (
            QuizAttempt.objects.select_related("quiz", "quiz__cohort")
            .filter(pk=attempt_id, learner=user)
            .first()
        )
    if attempt is None:
        raise Http404("No such attempt.")
    return attempt
