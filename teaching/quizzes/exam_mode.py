"""Which doors exam mode shuts for a learner sitting held-back quizzes.

Named in settings.EXAM_LOCK_PROVIDERS (quiz.core.exam_mode's
ExamLockProvider). While a learner has a live attempt (in progress, before
its deadline; previews never count) on a quiz whose feedback is held back,
every self-check and exercise any of its slots draws from is shut: the
whole pool, not only the questions this attempt drew, since another
attempt may draw the rest.
Every other quiz is shut too (its results, or a practice quiz's checked
answers, may hold the same questions' keys or a template's method).
"""

from __future__ import annotations

from django.utils import timezone

from quiz.core.exam_mode import ExamLock
from teaching.quizzes.bank import pool_refs
from teaching.quizzes.models import Quiz, QuizAttempt
from teaching.quizzes.policy import HELD_BACK


def exam_lock_for(user) -> ExamLock | None:
    sitting = QuizAttempt.objects.filter(
        learner=user,
        preview=False,
        state=QuizAttempt.State.IN_PROGRESS,
        deadline__gt=timezone.now(),
        quiz__feedback__in=HELD_BACK,
    ).values_list("quiz_id", flat=True)
    quizzes = list(Quiz.objects.filter(pk__in=list(sitting)).prefetch_related("slots"))
    if not quizzes:
        return None
    refs = {
        ref
        for quiz in quizzes
        for slot in quiz.slots.all()
        for ref in pool_refs(slot.pool)
    }
    return ExamLock(
        quizzes=tuple(quiz.title for quiz in quizzes),
        questions=frozenset(int(r[2:]) for r in refs if r.startswith("q:")),
        exercises=frozenset(r[2:] for r in refs if r.startswith("x:")),
        quiz_ids=frozenset(quiz.pk for quiz in quizzes),
    )
