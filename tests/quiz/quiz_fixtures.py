"""Fixtures for the quiz tests: a small course with a question template.

Import with `from tests.quiz.quiz_fixtures import *` (after
tests.quiz.cohort_fixtures) in a test module.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from quiz.models import Question
from teaching.models import QuizAttempt
from teaching.quizzes.bank import Bank

__all__ = [
    "FORM_TIME",
    "NOW",
    "api",
    "bank_course",
    "create",
    "keys",
    "quiz_body",
    "quiz_course",
    "quiz_form",
    "right_answers",
    "scored_questions",
    "sit",
    "start",
]
NOW = timezone.now().replace(microsecond=0)

# A template in the test course: the real answer functions, a small course.
TEMPLATE = """\
slug: params-of-a-model
title: Parameters of a model
section: basics
lessons: [first-lesson]
kind: numeric
prompt: >-
  Vocabulary {vocab_size:,}, context {block_size:,}, {n_layer} blocks of
  width {n_embd}, head tied. How many parameters?
params:
  vocab_size: [50257, 32000, 50304]
  block_size: [512, 1024]
  n_layer: {from: 2, to: 24}
  n_embd: {from: 128, to: 1024, step: 64}
answer: gpt2_params_tied
tolerance: {relative: 0.001}
explanation: The head reuses the token table, so {answer}.
misconceptions:
  - answer: gpt2_params_head_counted_twice
    diagnosis: tied-head-counted-twice
    says: counted the tied head twice
"""
DIAGNOSES = """\
diagnoses:
  - slug: tied-head-counted-twice
    summary: Counted the tied head as a second matrix.
    lessons: [first-lesson]
"""


@pytest.fixture
def bank_course(content_tree):
    content_tree.raw("quiz-templates/params-of-a-model.yaml", TEMPLATE)
    content_tree.raw("diagnoses.yaml", DIAGNOSES)
    return content_tree


@pytest.fixture
def quiz_course(bank_course, course):
    return course


def api(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def scored_questions() -> dict[str, Question]:
    """The first lesson's choice and numeric self-checks."""
    qs = Question.objects.filter(lesson__slug="first-lesson").order_by("order")
    return {q.kind: q for q in qs if q.kind in ("choice", "numeric")}


def quiz_body(**changes) -> dict:
    questions = scored_questions()
    values = {
        "title": "Quiz 1",
        "opens_at": (NOW - timedelta(hours=1)).isoformat(),
        "closes_at": (NOW + timedelta(days=1)).isoformat(),
        "time_limit": 30,
        "attempts_allowed": 1,
        "combine": "best",
        "feedback": "after_submit",
        "slots": [
            {"points": 2, "pool": {"templates": ["params-of-a-model"]}},
            {"points": 1, "pool": {"questions": [questions["choice"].pk]}},
            {"points": 1, "pool": {"questions": [questions["numeric"].pk]}},
        ],
    }
    values.update(changes)
    return values


FORM_TIME = "%Y-%m-%dT%H:%M"  # a datetime-local field's value


def quiz_form(**changes) -> dict:
    """The instructor's quiz form, filled in (a template slot and a lesson's)."""
    values = {
        "tz": "UTC",
        "title": "Counting quiz",
        "opens_at": (NOW - timedelta(hours=1)).strftime(FORM_TIME),
        "closes_at": (NOW + timedelta(days=1)).strftime(FORM_TIME),
        "time_limit": "20",
        "attempts_allowed": "1",
        "combine": "best",
        "feedback": "after_close",
        "shuffle": "on",
        "slots": "2 x1: template:params-of-a-model\n1 x2: lesson:first-lesson\n",
    }
    values.update(changes)
    return values


def create(world, **changes) -> dict:
    response = api(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/quizzes/",
        quiz_body(**changes),
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def start(user, quiz_id: int):
    return api(user).post(f"/api/v1/quizzes/{quiz_id}/attempts/", {}, format="json")


def keys(attempt_id: int) -> dict[int, str]:
    """Each question's right answer as text, computed on the server side."""
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    bank = Bank(i["ref"] for i in attempt.items)
    out = {}
    for n, item in enumerate(attempt.items, start=1):
        drawn = bank.draw(item["ref"], item["seed"])
        out[n] = drawn
    return out


def right_answers(attempt_id: int) -> dict[str, object]:
    """What a learner who knows everything sends: shown option ids or numbers."""
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    answers = {}
    for n, drawn in keys(attempt_id).items():
        item = attempt.items[n - 1]
        if drawn.kind == "choice":
            answers[str(n)] = item["order"].index(drawn.correct)
        else:
            answers[str(n)] = str(drawn.answer)
    return answers


def sit(user, quiz_id: int, answers_for) -> QuizAttempt:
    """Start, answer with `answers_for(attempt_id)`, submit: the attempt."""
    state = start(user, quiz_id).json()
    answers = answers_for(state["id"])
    api(user).patch(
        f"/api/v1/attempts/{state['id']}/", {"answers": answers}, format="json"
    )
    api(user).post(f"/api/v1/attempts/{state['id']}/submit/")
    return QuizAttempt.objects.get(pk=state["id"])
