"""Who may see a quiz or an attempt: one rule for the pages and the API.

A quiz answers to its cohort's instructors and superusers (all of it) and
to the cohort's members while it is not archived (what a learner sees);
an attempt answers only to its own learner. A member asking for what only
instructors see (results, statistics, a change) gets PermissionDenied (a
403, as assignments answer); anyone else Http404 ("no such"), which the
API turns into a JSON 404 with the same words.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from quiz.core.exam_mode import exam_lock
from quiz.core.params import id_in_range
from teaching import selectors as sel
from teaching.models import CohortMembership
from teaching.quizzes.models import Quiz, QuizAttempt


def teaches(user, quiz: Quiz) -> bool:
    if user.is_superuser:
        return True
    return sel.cohorts_taught_ids(user).filter(pk=quiz.cohort_id).exists()


def quiz_taught(user, quiz_id: int) -> Quiz:
    """The quiz if `user` teaches its cohort (or is a superuser); 403 for a
    learner of the cohort, 404 for anyone else."""
    quiz, teaches = quiz_seen(user, quiz_id)
    if not teaches:
        raise PermissionDenied("Only the quiz's instructors can do this.")
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
    _exam_open(user, quiz)
    return quiz, False


def _exam_open(user, quiz: Quiz) -> None:
    """403 for another quiz while the learner sits a held-back one: its
    results, or a practice quiz's checks, may hold the same keys."""
    lock = exam_lock(user)
    if lock and quiz.pk not in lock.quiz_ids:
        raise PermissionDenied(lock.message("Another quiz"))


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
    if not attempt.preview:
        _exam_open(user, attempt.quiz)
    return attempt


def attempt_taught(user, attempt_id: int) -> QuizAttempt:
    """An attempt of a quiz `user` teaches (its review); 403 for a learner of
    the cohort, 404 for anyone else."""
    attempt = None
    if id_in_range(attempt_id):
        attempt = (
            QuizAttempt.objects.select_related("quiz", "quiz__cohort", "learner")
            .filter(pk=attempt_id)
            .first()
        )
    if attempt is None:
        raise Http404("No such attempt.")
    quiz_taught(user, attempt.quiz_id)
    return attempt
