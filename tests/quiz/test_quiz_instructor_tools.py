"""The instructor's tools around an assessment, through the API: close now,
reopen for one learner, review an attempt and override a question's score,
regrade one question for this quiz only (with a dry run), and the question
picker's search. Each bad input is a 4xx naming its field."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from quiz.core.models import AuditEntry
from teaching.models import Quiz, QuizAccommodation, QuizAttempt
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, create, right_answers, scored_questions

pytestmark = pytest.mark.django_db


def sat(world, quiz_id, user, answers=None):
    """Start, answer (all right by default), submit; the attempt's id."""
    client = api(user)
    state = client.post(f"/api/v1/quizzes/{quiz_id}/attempts/").json()
    given = right_answers(state["id"]) if answers is None else answers(state["id"])
    client.patch(f"/api/v1/attempts/{state['id']}/", {"answers": given}, format="json")
    client.post(f"/api/v1/attempts/{state['id']}/submit/")
    return state["id"]


def fixed_quiz(world, **changes) -> dict:
    """Slot 1 the choice self-check, 2 the numeric one, 3 the template."""
    questions = scored_questions()
    slots = [
        {"points": 1, "pool": {"questions": [questions["choice"].pk]}},
        {"points": 1, "pool": {"questions": [questions["numeric"].pk]}},
        {"points": 2, "pool": {"templates": ["params-of-a-model"]}},
    ]
    return create(world, slots=slots, shuffle=False, **changes)


def test_close_now_ends_every_running_attempt_and_is_audited(world, quiz_course):
    quiz = fixed_quiz(world, feedback="after_close")
    later = timezone.now() + timedelta(days=5)
    api(world.owner).post(
        f"/api/v1/quizzes/{quiz['id']}/accommodations/",
        {"learner": "leo", "closes_at": later.isoformat()},
        format="json",
    )
    done = sat(world, quiz["id"], world.lea)
    running = api(world.leo).post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    assert api(world.lea).get(f"/api/v1/attempts/{done}/").json()["score"] is None

    assert (
        api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/close/").status_code == 403
    )
    closed = api(world.owner).post(f"/api/v1/quizzes/{quiz['id']}/close/")
    assert closed.status_code == 200
    attempt = QuizAttempt.objects.get(pk=running["id"])
    assert attempt.state == "submitted" and attempt.submitted_by == "instructor"
    assert QuizAccommodation.objects.get(learner=world.leo).closes_at <= timezone.now()
    # Nobody can answer now, so feedback after close has opened for lea.
    assert api(world.lea).get(f"/api/v1/attempts/{done}/").json()["score"] == 1.0
    late = api(world.leo).patch(
        f"/api/v1/attempts/{running['id']}/", {"answers": {"1": 0}}, format="json"
    )
    assert late.status_code == 409
    assert AuditEntry.objects.filter(
        model="teaching.Quiz", changes__closed__1="closed now by an instructor"
    ).exists()

    upcoming = fixed_quiz(
        world,
        title="Next week",
        opens_at=(timezone.now() + timedelta(days=7)).isoformat(),
        closes_at=(timezone.now() + timedelta(days=8)).isoformat(),
    )
    refused = api(world.owner).post(f"/api/v1/quizzes/{upcoming['id']}/close/")
    assert refused.status_code == 400 and "closes_at" in refused.json()


def test_reopen_for_one_learner_gives_an_attempt_and_holds_feedback(world, quiz_course):
    quiz = fixed_quiz(world, feedback="after_close")
    first = sat(world, quiz["id"], world.lea)
    past = timezone.now() - timedelta(seconds=1)
    Quiz.objects.filter(pk=quiz["id"]).update(
        opens_at=past - timedelta(hours=2), closes_at=past
    )
    assert api(world.lea).get(f"/api/v1/attempts/{first}/").json()["score"] == 1.0
    url = f"/api/v1/quizzes/{quiz['id']}/reopen/"
    owner = api(world.owner)
    soon = timezone.now() + timedelta(hours=1)
    for body, field in (
        ({"learner": "nobody", "closes_at": soon.isoformat()}, "learner"),
        ({"learner": "lea", "closes_at": past.isoformat()}, "closes_at"),
        ({"learner": "lea", "closes_at": "tomorrow"}, "closes_at"),
        (
            {"learner": "lea", "closes_at": soon.isoformat(), "extra_attempts": -1},
            "extra_attempts",
        ),
        ({"learner": "lea"}, "closes_at"),
    ):
        bad = owner.post(url, body, format="json")
        assert bad.status_code == 400 and field in bad.json(), (body, bad.json())
    reopened = owner.post(
        url, {"learner": "lea", "closes_at": soon.isoformat()}, format="json"
    )
    assert reopened.status_code == 200, reopened.json()
    assert reopened.json()["extra_attempts"] == 1
    # lea may answer again, so after-close feedback is held again for all.
    assert api(world.lea).get(f"/api/v1/attempts/{first}/").json()["score"] is None
    second = api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/attempts/")
    assert second.status_code == 201 and second.json()["number"] == 2
    assert (
        api(world.leo).post(f"/api/v1/quizzes/{quiz['id']}/attempts/").status_code
        == 409
    )
    assert AuditEntry.objects.filter(model="teaching.QuizAccommodation").exists()


def test_an_instructor_reviews_an_attempt_and_sets_a_questions_score(
    world, quiz_course
):
    quiz = fixed_quiz(world)
    attempt_id = sat(world, quiz["id"], world.lea, answers=lambda a: {"1": 0})
    url = f"/api/v1/attempts/{attempt_id}/review/"
    assert api(world.lea).get(url).status_code == 403  # not for the learner
    assert api(world.other).get(url).status_code == 404
    review = api(world.owner).get(url).json()
    assert review["learner"] == "lea" and review["score"] == 0.0
    first = review["questions"][0]
    assert first["answer"] == 0 and first["feedback"]["right_option"] == 1
    assert review["questions"][2]["feedback"]["right_answer"]  # their variant's key

    overrides = f"/api/v1/attempts/{attempt_id}/overrides/"
    owner = api(world.owner)
    for body, field in (
        ({"question": 1, "points": 2, "comment": "x"}, "points"),
        ({"question": 1, "points": -1, "comment": "x"}, "points"),
        ({"question": 9, "points": 1, "comment": "x"}, "question"),
        ({"question": 1, "points": 1, "comment": " "}, "comment"),
        ({"question": "one", "points": 1, "comment": "x"}, "question"),
        ({"question": 2, "points": None}, "points"),
    ):
        bad = owner.post(overrides, body, format="json")
        assert bad.status_code == 400 and field in bad.json(), (body, bad.json())
    set_ = owner.post(
        overrides,
        {"question": 1, "points": 0.5, "comment": "a fair reading of option a"},
        format="json",
    )
    assert set_.status_code == 200
    assert set_.json()["points"] == 0.5 and set_.json()["score"] == 0.5 / 4
    mine = api(world.lea).get(f"/api/v1/attempts/{attempt_id}/").json()
    assert mine["questions"][0]["feedback"]["override"] == {
        "score": 0.5,
        "comment": "a fair reading of option a",
    }
    # A regrade keeps it.
    api(world.owner).post(f"/api/v1/quizzes/{quiz['id']}/regrade/")
    assert QuizAttempt.objects.get(pk=attempt_id).points == 0.5
    cleared = owner.post(overrides, {"question": 1, "points": None}, format="json")
    assert cleared.status_code == 200 and cleared.json()["points"] == 0.0
    assert AuditEntry.objects.filter(model="teaching.QuizAttempt").count() == 2


def test_regrade_one_question_with_a_dry_run_first(world, quiz_course):
    quiz = fixed_quiz(world)
    lea = sat(world, quiz["id"], world.lea)  # all right: 4 of 4
    leo = sat(world, quiz["id"], world.leo, answers=lambda a: {"1": 0})  # 0 of 4
    choice = f"q:{scored_questions()['choice'].pk}"
    url = f"/api/v1/quizzes/{quiz['id']}/questions/regrade/"
    owner = api(world.owner)
    listed = owner.get(f"/api/v1/quizzes/{quiz['id']}/questions/").json()["questions"]
    assert [q["ref"] for q in listed][:2] == [
        choice,
        f"q:{scored_questions()['numeric'].pk}",
    ]
    assert "key" not in listed[2]["actions"]  # a template's keys differ per learner

    dry = owner.post(
        url,
        {"question": choice, "action": "key", "answer": 0, "dry_run": True},
        format="json",
    )
    assert dry.status_code == 200
    moved = {
        row["learner"]: (row["old_points"], row["new_points"])
        for row in dry.json()["changes"]
    }
    assert moved == {"lea": (4.0, 3.0), "leo": (0.0, 1.0)}
    assert QuizAttempt.objects.get(pk=lea).points == 4.0  # nothing saved

    applied = owner.post(
        url,
        {"question": choice, "action": "key", "answer": 0, "comment": "a, not b"},
        format="json",
    )
    assert applied.status_code == 200 and applied.json()["changed"] == 2
    assert QuizAttempt.objects.get(pk=leo).points == 1.0
    assert scored_questions()["choice"].correct_choice == 1  # unchanged elsewhere
    shown = api(world.leo).get(f"/api/v1/attempts/{leo}/").json()["questions"][0]
    assert shown["feedback"]["correct"] and "Regraded" in shown["feedback"]["regraded"]

    dropped = owner.post(url, {"question": choice, "action": "drop"}, format="json")
    assert dropped.status_code == 200
    attempt = QuizAttempt.objects.get(pk=lea)
    assert (attempt.points, attempt.possible, attempt.score) == (3.0, 3.0, 1.0)
    undone = owner.post(url, {"question": choice, "action": "undo"}, format="json")
    assert undone.status_code == 200
    assert QuizAttempt.objects.get(pk=lea).points == 4.0

    template = "t:params-of-a-model"
    for body, field in (
        ({"question": "q:999999", "action": "drop"}, "question"),
        ({"question": template, "action": "key", "answer": 5}, "action"),
        ({"question": choice, "action": "tolerance", "relative": 0.1}, "action"),
        ({"question": choice, "action": "key", "answer": 7}, "answer"),
        ({"question": f"q:{scored_questions()['numeric'].pk}", "action": "key",
          "answer": "many"}, "answer"),
        ({"question": template, "action": "tolerance"}, "absolute"),
        ({"question": template, "action": "tolerance", "relative": -1}, "relative"),
        ({"question": choice, "action": "undo"}, "question"),
        ({"question": choice, "action": "erase"}, "action"),
    ):  # fmt: skip
        bad = owner.post(url, body, format="json")
        assert bad.status_code == 400 and field in bad.json(), (body, bad.json())
    wider = owner.post(
        url, {"question": template, "action": "tolerance", "relative": 0.5},
        format="json",
    )  # fmt: skip
    assert wider.status_code == 200


def test_the_picker_searches_the_bank_by_words_lesson_and_kind(world, quiz_course):
    owner = api(world.owner)
    found = owner.get("/api/v1/quiz-bank/", {"q": "parameters"}).json()["results"]
    refs = {row["ref"]: row for row in found}
    template = refs["t:params-of-a-model"]
    assert template["slot_word"] == "template:params-of-a-model"
    assert template["sample"]["varies"] and template["sample"]["answer"]
    numeric = refs[f"q:{scored_questions()['numeric'].pk}"]
    assert numeric["source"] == "self-check" and "lesson page" in numeric["practice"]
    choices = owner.get("/api/v1/quiz-bank/", {"kind": "choice"}).json()["results"]
    assert choices and {row["kind"] for row in choices} == {"choice"}
    codes = owner.get(
        "/api/v1/quiz-bank/", {"source": "exercise", "lesson": "first-lesson"}
    ).json()["results"]
    assert {row["slot_word"] for row in codes} == {"exercise:ex-a", "exercise:ex-b"}
    for params, field in (({"kind": "essay"}, "kind"), ({"source": "web"}, "source")):
        bad = owner.get("/api/v1/quiz-bank/", params)
        assert bad.status_code == 400 and field in bad.json()
    assert api(world.lea).get("/api/v1/quiz-bank/").status_code == 403


def test_a_time_limit_may_be_a_fraction_of_a_minute(world, quiz_course):
    quiz = fixed_quiz(world, time_limit=7.5)
    assert quiz["time_limit"] == 7.5
    state = api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    assert 7 * 60 < state["time_left_seconds"] <= 7.5 * 60
    whole = fixed_quiz(world, title="Whole", time_limit=30)
    assert whole["time_limit"] == 30 and isinstance(whole["time_limit"], int)
    for limit in (0.2, -1, "soon", 10**9):
        bad = api(world.owner).patch(
            f"/api/v1/quizzes/{quiz['id']}/", {"time_limit": limit}, format="json"
        )
        assert bad.status_code == 400 and "time_limit" in bad.json(), limit
    form = Client()
    form.force_login(world.owner)
    page = form.get(f"/instructor/quizzes/{quiz['id']}/edit/").content.decode()
    assert 'name="time_limit" value="7.5"' in page
