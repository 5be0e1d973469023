"""Exam mode: while a learner sits a quiz whose feedback is held back, the
other doors to its keys are shut (as PrairieLearn's exam mode does).

A lesson's self-check answers at once, a reference solution unlocks after
a few attempts, a submission shows its checks: each would give away an
item of the quiz being sat. The teaching layer, above every such door,
knows which quizzes a learner is sitting and what they draw from: its
ExamLockProvider is named in settings.EXAM_LOCK_PROVIDERS (quiz.core.providers;
with none named nothing is shut). Each door below (self-check answers,
lesson pages, review cards, the data export, exercise pages, submissions
and their API) asks `exam_lock(user)` and refuses what the lock holds with
a 403 that says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from quiz.core.providers import providers


@dataclass(frozen=True)
class ExamLock:
    """What a learner may not open now, and the quizzes that hold it."""

    quizzes: tuple[str, ...]  # titles of the quizzes being sat
    questions: frozenset[int] = frozenset()  # lesson self-check ids
    exercises: frozenset[str] = frozenset()  # exercise slugs
    quiz_ids: frozenset[int] = frozenset()  # the quizzes being sat: all else shut

    def message(self, what: str) -> str:
        names = ", ".join(f"“{title}”" for title in self.quizzes)
        return (
            f"{what} is closed while you sit {names}: it would show an answer "
            "of the quiz. It opens again once you submit your attempt."
        )


class ExamLocked(Exception):  # noqa: N818 - reads as what happened
    """A door exam mode holds shut; the message is for the learner (a 403)."""


class ExamLockProvider(Protocol):
    """What a layer above answers: what it holds shut for `user` now, or None."""

    def __call__(self, user, /) -> ExamLock | None: ...


def exam_lock(user) -> ExamLock | None:
    """What exam mode holds shut for `user` now, or None."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    sources: tuple[ExamLockProvider, ...] = providers("EXAM_LOCK_PROVIDERS")
    locks = [lock for provider in sources if (lock := provider(user))]
    if not locks:
        return None
    return ExamLock(
        quizzes=tuple(dict.fromkeys(t for lock in locks for t in lock.quizzes)),
        questions=frozenset().union(*(lock.questions for lock in locks)),
        exercises=frozenset().union(*(lock.exercises for lock in locks)),
        quiz_ids=frozenset().union(*(lock.quiz_ids for lock in locks)),
    )


def question_check(user, question_id: int, what: str = "This self-check") -> None:
    """ExamLocked if exam mode holds this self-check for `user`."""
    lock = exam_lock(user)
    if lock and question_id in lock.questions:
        raise ExamLocked(lock.message(what))


def exercise_check(user, slug: str, what: str = "This exercise") -> None:
    """ExamLocked if exam mode holds this exercise for `user`."""
    lock = exam_lock(user)
    if lock and slug in lock.exercises:
        raise ExamLocked(lock.message(what))
