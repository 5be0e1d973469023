"""Item analysis and regrade of a real quiz, through the API.

The arithmetic is proved on a hand-worked data set in
test_quiz_statistics.py; here: attempts become the right responses, a
wrong numeric answer is traced to its misconception, diagnosis and lesson,
and a regrade rescoring every attempt keeps the old scores.
"""

from __future__ import annotations

import csv
import io

import pytest

from quiz.models import Question, QuizAttempt
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import (
    api,
    create,
    keys,
    right_answers,
    scored_questions,
    sit,
)

pytestmark = pytest.mark.django_db


def template_number(attempt_id: int) -> int:
    return next(n for n, d in keys(attempt_id).items() if d.ref.startswith("t:"))


def test_statistics_name_the_misconception_behind_a_wrong_number(
    world, quiz_course, make_user
):
    quiz = create(world, shuffle=False)

    def head_counted_twice(attempt_id):
        answers = right_answers(attempt_id)
        drawn = keys(attempt_id)[template_number(attempt_id)]
        answers[str(template_number(attempt_id))] = str(drawn.wrong[0].number)
        return answers

    sit(world.lea, quiz["id"], right_answers)
    sit(world.leo, quiz["id"], head_counted_twice)
    stats = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").json()
    assert stats["attempts"] == 2
    slot1 = next(s for s in stats["slots"] if s["label"] == "1")
    assert slot1["facility"] == 0.5
    (question,) = slot1["questions"]
    assert question["title"] == "Parameters of a model"
    (seen,) = question["misconceptions"]
    assert seen["text"] == "50% gave the answer of: counted the tied head twice"
    assert seen["diagnosis"] == "tied-head-counted-twice"
    assert [le["slug"] for le in seen["lessons"]] == ["first-lesson"]
    # The choice self-check: both right, so it is flagged as too easy.
    slot2 = next(s for s in stats["slots"] if s["label"] == "2")
    assert [f["code"] for f in slot2["questions"][0]["flags"]][:1] == ["too-easy"]
    text = (
        api(world.owner)
        .get(f"/api/v1/quizzes/{quiz['id']}/statistics/?format=csv")
        .content.decode()
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 1 + 3 and rows[0][0] == "slot"
    # Learners and other instructors get nothing.
    assert (
        api(world.lea).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").status_code
        == 404
    )
    assert (
        api(world.other).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").status_code
        == 404
    )


def test_a_regrade_rescores_every_attempt_and_reports_the_old_scores(
    world, quiz_course
):
    quiz = create(world, shuffle=False)
    numeric = scored_questions()["numeric"]
    lea = sit(world.lea, quiz["id"], right_answers)

    def off_by_one(attempt_id):
        answers = right_answers(attempt_id)
        answers["3"] = str(int(numeric.numeric_answer) + 1)
        return answers

    leo = sit(world.leo, quiz["id"], off_by_one)
    assert (lea.score, leo.score) == (1.0, 0.75)
    # The instructor widens the tolerance: leo's answer is now right.
    Question.objects.filter(pk=numeric.pk).update(tolerance=1)
    report = api(world.owner).post(f"/api/v1/quizzes/{quiz['id']}/regrade/").json()
    assert (report["total"], report["changed"]) == (2, 1)
    (change,) = report["changes"]
    assert change["learner"] == "leo" and change["questions"] == [3]
    assert (change["old_score"], change["new_score"]) == (0.75, 1.0)
    assert QuizAttempt.objects.get(pk=leo.pk).score == 1.0
    results = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/results/").json()
    assert {r["learner"]: r["score"] for r in results["learners"]}["leo"] == 1.0
    again = api(world.owner).post(f"/api/v1/quizzes/{quiz['id']}/regrade/").json()
    assert again["changed"] == 0
