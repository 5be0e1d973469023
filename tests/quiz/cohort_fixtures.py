"""Fixtures for the cohort tests: a small course, two instructors, learners.

Import with `from tests.quiz.cohort_fixtures import *` in a test module.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from grader.models import Exercise, Submission
from quiz.content.loader import content_load
from quiz.models import Lesson, LessonRead, Question, QuestionAttempt
from teaching.cohorts import cohort_create, cohort_join

__all__ = [
    "World",
    "answer",
    "course",
    "read",
    "submit",
    "world",
]


def _exercise(slug: str, lesson: Lesson) -> Exercise:
    return Exercise.objects.create(
        slug=slug,
        lesson=lesson,
        title=slug.replace("-", " ").title(),
        harness="block-param-count",
        entry_point="f",
        signature="f()",
        prompt="Do it.",
        starter="def f():\n    ...\n",
        solution="def f():\n    return 1\n",
    )


@pytest.fixture
def course(content_tree):
    """Lessons first/second (section basics) and third (advanced), 3 questions
    each; exercises ex-a and ex-b on first-lesson, ex-c on third-lesson."""
    content_load(root=content_tree.root)
    lessons = {les.slug: les for les in Lesson.objects.all()}
    exercises = {
        "ex-a": _exercise("ex-a", lessons["first-lesson"]),
        "ex-b": _exercise("ex-b", lessons["first-lesson"]),
        "ex-c": _exercise("ex-c", lessons["third-lesson"]),
    }
    return {"lessons": lessons, "exercises": exercises}


def submit(
    user,
    exercise: Exercise,
    status: str,
    *,
    checks: list[dict] | None = None,
    minutes_ago: float = 0,
    code: str = "def f():\n    return 1\n",
) -> Submission:
    sub = Submission.objects.create(
        user=user,
        exercise=exercise,
        code=code,
        seed=0,
        status=status,
        score=1.0 if status == "passed" else 0.0,
        checks=checks or [],
        finished_at=timezone.now(),
    )
    # created_at is auto_now_add: move it to order the attempts.
    Submission.objects.filter(pk=sub.pk).update(
        created_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    sub.refresh_from_db()
    return sub


def answer(user, question: Question, correct: bool) -> QuestionAttempt:
    return QuestionAttempt.objects.create(
        user=user, question=question, answer="1", correct=correct
    )


def read(user, lesson: Lesson) -> LessonRead:
    return LessonRead.objects.create(user=user, lesson=lesson)


class World:
    """Who is who: `owner` teaches `cohort` (members lea and leo); `other`
    teaches `other_cohort` (member max); `outsider` is in no cohort."""

    def __init__(self, make_user):
        self.owner = make_user("ian", "instructor")
        self.other = make_user("oto", "instructor")
        self.superuser = make_user("ada", "admin")
        self.lea = make_user("lea", "learner")
        self.leo = make_user("leo", "learner")
        self.max = make_user("max", "learner")
        self.outsider = make_user("out", "learner")
        self.cohort = cohort_create(owner=self.owner, name="Spring 2026")
        self.other_cohort = cohort_create(owner=self.other, name="Other group")
        cohort_join(cohort=self.cohort, user=self.lea)
        cohort_join(cohort=self.cohort, user=self.leo)
        cohort_join(cohort=self.other_cohort, user=self.max)

    def by_role(self, role: str):
        """anonymous, learner, other, owner, superuser -> a user or None."""
        return {
            "anonymous": None,
            "learner": self.lea,
            "other": self.other,
            "owner": self.owner,
            "superuser": self.superuser,
        }[role]


@pytest.fixture
def world(make_user) -> World:
    return World(make_user)
