"""Quizzes through the API: authoring, taking, deadlines, integrity, results."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from quiz.content.loader import content_load
from quiz.core.models import AuditEntry
from quiz.models import Question
from teaching.models import QuizAttempt
from teaching.tasks import close_expired_attempts
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import (
    NOW,
    api,
    create,
    keys,
    quiz_body,
    right_answers,
    start,
)

pytestmark = pytest.mark.django_db


def test_an_instructor_creates_lists_and_reads_a_quiz(world, quiz_course):
    created = create(world)
    assert created["title"] == "Quiz 1" and created["time_limit"] == 30
    assert [s["points"] for s in created["slots"]] == [2.0, 1.0, 1.0]
    listed = api(world.owner).get(f"/api/v1/cohorts/{world.cohort.pk}/quizzes/")
    assert [q["id"] for q in listed.json()] == [created["id"]]
    assert AuditEntry.objects.filter(action="create").exists()
    # A learner of the cohort reads its settings, never its pools.
    seen = api(world.lea).get(created["url"])
    assert seen.status_code == 200 and "slots" not in seen.json()
    # Same rules as assignments: a learner gets 403 on the cohort's list,
    # another instructor 404, a stranger 404 on the quiz.
    assert (
        api(world.lea).get(f"/api/v1/cohorts/{world.cohort.pk}/quizzes/").status_code
        == 403
    )
    assert api(world.other).get(created["url"]).status_code == 404
    assert api(world.max).get(created["url"]).status_code == 404
    # A learner of the cohort may open the quiz, not change it: 403.
    refused = api(world.lea).patch(created["url"], {"title": "x"})
    assert refused.status_code == 403
    for part in ("results", "statistics", "regrade"):
        url = f"{created['url']}{part}/"
        method = "post" if part == "regrade" else "get"
        assert getattr(api(world.lea), method)(url).status_code == 403, part
        assert getattr(api(world.max), method)(url).status_code == 404, part


def test_bad_quizzes_get_a_400_that_names_the_slot(world, quiz_course):
    recall = Question.objects.get(lesson__slug="first-lesson", kind="recall")
    for slots, said in [
        ([{"pool": {"templates": ["no-such"]}}], "Slot 1: No template no-such."),
        ([{"pool": {"questions": [recall.pk]}}], "Slot 1: Question"),
        ([{"pool": {"lessons": ["first-lesson"]}, "draw": 9}], "holds 3 question"),
        ([{"pool": {"colours": ["red"]}}], "Unknown pool keys: colours."),
        ([], "at least one slot"),
    ]:
        response = api(world.owner).post(
            f"/api/v1/cohorts/{world.cohort.pk}/quizzes/",
            quiz_body(slots=slots),
            format="json",
        )
        assert response.status_code == 400, slots
        assert said in json.dumps(response.json()), response.json()
    response = api(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/quizzes/",
        quiz_body(closes_at=(NOW - timedelta(days=2)).isoformat()),
        format="json",
    )
    assert response.status_code == 400 and "closes_at" in response.json()


def test_a_learner_takes_a_quiz_and_no_answer_leaks_before_submission(
    world, quiz_course
):
    quiz = create(world)
    seen: list[str] = []  # every body the learner's client receives

    def call(method, url, data=None):
        response = getattr(api(world.lea), method)(url, data, format="json")
        seen.append(response.content.decode())
        return response

    started = call("post", f"/api/v1/quizzes/{quiz['id']}/attempts/", {})
    assert started.status_code == 201
    state = started.json()
    url = f"/api/v1/attempts/{state['id']}/"
    assert len(state["questions"]) == 3 and state["state"] == "in_progress"
    assert 29 * 60 < state["time_left_seconds"] <= 30 * 60
    # A reload or another device resumes the same attempt and variants.
    again = call("post", f"/api/v1/quizzes/{quiz['id']}/attempts/", {})
    assert again.status_code == 200 and again.json()["id"] == state["id"]
    assert [q["prompt"] for q in again.json()["questions"]] == [
        q["prompt"] for q in state["questions"]
    ]
    answers = right_answers(state["id"])
    numeric = next(n for n, d in keys(state["id"]).items() if d.ref.startswith("t:"))
    key = keys(state["id"])[numeric].answer
    # A person writes 124.4M: within the template's 0.1%, in millions.
    answers[str(numeric)] = f"{key / 1e6:.4f}M"
    saved = call("patch", url, {"answers": answers})
    assert saved.status_code == 200, saved.json()
    assert all(q["answer"] is not None for q in saved.json()["questions"])
    call("get", url)
    drawn = keys(state["id"])
    secrets = [d.explanation for d in drawn.values() if d.explanation]
    secrets += [f"{d.answer:,}" for d in drawn.values() if d.kind == "numeric"]
    secrets += ["right_answer", "right_option", "b is right."]
    for body in seen:
        for secret in secrets:
            assert secret not in body, (secret, body[:300])
    submitted = api(world.lea).post(f"{url}submit/")
    assert submitted.status_code == 200
    result = submitted.json()
    assert result["state"] == "submitted" and result["score"] == 1.0
    assert all(q["feedback"]["correct"] for q in result["questions"])
    # Submitting again changes nothing.
    twice = api(world.lea).post(f"{url}submit/")
    assert twice.json()["submitted_at"] == result["submitted_at"]


def test_a_malformed_number_is_refused_by_slot_and_the_saved_answer_stays(
    world, quiz_course
):
    quiz = create(world, shuffle=False)
    state = start(world.lea, quiz["id"]).json()
    url = f"/api/v1/attempts/{state['id']}/"
    first = api(world.lea).patch(url, {"answers": {"1": "1,234"}}, format="json")
    assert first.status_code == 200, first.json()
    bad = api(world.lea).patch(url, {"answers": {"1": "12x", "2": 0}}, format="json")
    assert bad.status_code == 400
    assert "Question 1 (slot 1)" in bad.json()["answers"]["1"]
    assert bad.json()["saved"] == ["2"]
    answers = {
        q["number"]: q["answer"] for q in api(world.lea).get(url).json()["questions"]
    }
    assert answers[1] == "1,234" and answers[2] == 0
    # Another learner's attempt does not exist for them.
    assert (
        api(world.leo).patch(url, {"answers": {"1": "3"}}, format="json").status_code
        == 404
    )
    assert api(world.leo).get(url).status_code == 404


def test_after_the_deadline_an_answer_is_refused_and_the_earlier_ones_count(
    world, quiz_course
):
    quiz = create(world, shuffle=False)
    state = start(world.lea, quiz["id"]).json()
    url = f"/api/v1/attempts/{state['id']}/"
    right = right_answers(state["id"])
    api(world.lea).patch(url, {"answers": {"2": right["2"]}}, format="json")
    QuizAttempt.objects.filter(pk=state["id"]).update(
        deadline=timezone.now() - timedelta(seconds=1)
    )
    late = api(world.lea).patch(url, {"answers": {"3": right["3"]}}, format="json")
    assert late.status_code == 409 and "deadline" in late.json()["detail"]
    attempt = QuizAttempt.objects.get(pk=state["id"])
    assert attempt.state == "submitted" and attempt.submitted_by == "deadline"
    assert attempt.results == [0.0, 1.0, 0.0] and attempt.points == 1.0
    assert "3" not in attempt.answers


def test_the_periodic_task_closes_expired_attempts_with_no_page_open(
    world, quiz_course
):
    quiz = create(world)
    expired = start(world.lea, quiz["id"]).json()["id"]
    running = start(world.leo, quiz["id"]).json()["id"]
    QuizAttempt.objects.filter(pk=expired).update(
        deadline=timezone.now() - timedelta(minutes=1)
    )
    assert close_expired_attempts() == 1
    assert QuizAttempt.objects.get(pk=expired).state == "submitted"
    assert QuizAttempt.objects.get(pk=running).state == "in_progress"
    assert close_expired_attempts() == 0  # idempotent


def test_start_is_refused_before_opening_after_closing_and_past_the_attempts(
    world, quiz_course
):
    later = create(world, opens_at=(NOW + timedelta(hours=1)).isoformat())
    refused = start(world.lea, later["id"])
    assert refused.status_code == 409 and "opens at" in refused.json()["detail"]
    quiz = create(world, attempts_allowed=1)
    first = start(world.lea, quiz["id"]).json()
    api(world.lea).post(f"/api/v1/attempts/{first['id']}/submit/")
    refused = start(world.lea, quiz["id"])
    assert refused.status_code == 409 and "all 1 attempt" in refused.json()["detail"]
    assert start(world.max, quiz["id"]).status_code == 404  # not in the cohort


def test_accommodations_give_extra_time_and_a_later_close(world, quiz_course):
    soon = timezone.now() + timedelta(minutes=5)  # from now, not from the import
    quiz = create(world, closes_at=soon.isoformat())
    granted = api(world.owner).post(
        f"/api/v1/quizzes/{quiz['id']}/accommodations/",
        {
            "learner": "lea",
            "time_factor": 1.5,
            "closes_at": (NOW + timedelta(days=1)).isoformat(),
        },
        format="json",
    )
    assert granted.status_code == 200, granted.json()
    lea = start(world.lea, quiz["id"]).json()
    leo = start(world.leo, quiz["id"]).json()
    assert 44 * 60 < lea["time_left_seconds"] <= 45 * 60  # 30 min x 1.5
    assert leo["time_left_seconds"] <= 5 * 60  # the quiz closes first
    refused = api(world.owner).post(
        f"/api/v1/quizzes/{quiz['id']}/accommodations/",
        {"learner": "max", "time_factor": 2},
        format="json",
    )
    assert refused.status_code == 400 and "not in this cohort" in json.dumps(
        refused.json()
    )
    assert AuditEntry.objects.filter(model="teaching.QuizAccommodation").count() == 1


def test_results_combine_attempts_by_the_quiz_rule_and_export_csv(world, quiz_course):
    quiz = create(world, attempts_allowed=2, combine="best")
    first = start(world.lea, quiz["id"]).json()
    api(world.lea).patch(
        f"/api/v1/attempts/{first['id']}/",
        {"answers": right_answers(first["id"])},
        format="json",
    )
    api(world.lea).post(f"/api/v1/attempts/{first['id']}/submit/")
    second = start(world.lea, quiz["id"]).json()
    api(world.lea).post(f"/api/v1/attempts/{second['id']}/submit/")
    results = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/results/").json()
    rows = {r["learner"]: r for r in results["learners"]}
    assert rows["lea"]["score"] == 1.0 and len(rows["lea"]["attempts"]) == 2
    assert rows["leo"]["score"] is None
    api(world.owner).patch(
        f"/api/v1/quizzes/{quiz['id']}/", {"combine": "average"}, format="json"
    )
    text = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/results/?format=csv")
    assert text["Content-Type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(text.content.decode())))
    assert {r["learner"]: r["score"] for r in table} == {"lea": "0.5000", "leo": ""}
    # Learners have attempts: the quiz can't be deleted, and its slots stay.
    assert api(world.owner).delete(f"/api/v1/quizzes/{quiz['id']}/").status_code == 409
    edit = api(world.owner).patch(
        f"/api/v1/quizzes/{quiz['id']}/",
        {"slots": quiz_body()["slots"][:1]},
        format="json",
    )
    assert edit.status_code == 400 and "regrade" in json.dumps(edit.json())


def test_immediate_feedback_makes_a_checked_answer_final(world, quiz_course):
    quiz = create(world, feedback="immediate", shuffle=False)
    state = start(world.lea, quiz["id"]).json()
    url = f"/api/v1/attempts/{state['id']}/"
    assert all("feedback" not in q for q in state["questions"])
    checked = api(world.lea).patch(url, {"answers": {"2": 0}}, format="json").json()
    shown = {q["number"]: q for q in checked["questions"]}
    assert "feedback" in shown[2] and "feedback" not in shown[1]
    again = api(world.lea).patch(url, {"answers": {"2": 1}}, format="json")
    assert again.status_code == 400 and "final" in again.json()["answers"]["2"]


def test_an_instructor_previews_sees_the_keys_and_restarts(world, quiz_course):
    quiz = create(world)
    preview = start(world.owner, quiz["id"])
    assert preview.status_code == 201 and preview.json()["preview"] is True
    assert all("feedback" in q for q in preview.json()["questions"])
    restarted = api(world.owner).post(
        f"/api/v1/quizzes/{quiz['id']}/attempts/", {"restart": True}, format="json"
    )
    assert (
        restarted.status_code == 201 and restarted.json()["id"] != preview.json()["id"]
    )
    # Previews are not results.
    rows = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/results/").json()
    assert all(not r["attempts"] for r in rows["learners"])


def test_the_schema_documents_the_quiz_api(world, quiz_course):
    schema = api(world.owner).get("/api/v1/schema/?format=json").json()
    for path in [
        "/api/v1/cohorts/{cohort_id}/quizzes/",
        "/api/v1/quizzes/{quiz_id}/",
        "/api/v1/quizzes/{quiz_id}/attempts/",
        "/api/v1/attempts/{attempt_id}/",
        "/api/v1/attempts/{attempt_id}/submit/",
        "/api/v1/quizzes/{quiz_id}/results/",
        "/api/v1/quizzes/{quiz_id}/accommodations/",
    ]:
        assert path in schema["paths"], path


CHOICE_TEMPLATE = """\
slug: params-choice
title: Parameters, choose
section: basics
lessons: [first-lesson]
kind: choice
prompt: "{n_layer} blocks of width {n_embd}: how many parameters?"
params:
  vocab_size: [50257]
  block_size: [1024]
  n_layer: {from: 2, to: 24}
  n_embd: {from: 128, to: 1024, step: 64}
answer: gpt2_params_tied
misconceptions:
  - answer: gpt2_params_head_counted_twice
    diagnosis: tied-head-counted-twice
    says: counted the tied head twice
  - answer: gpt2_params_forgot_wpe
    says: left out the position table
"""


def test_a_templates_options_are_shuffled_even_with_shuffle_off(
    world, bank_course, course
):
    """A template stores its right answer first; showing that order leaks it."""
    bank_course.raw("quiz-templates/params-choice.yaml", CHOICE_TEMPLATE)
    content_load(root=bank_course.root)
    quiz = create(
        world,
        shuffle=False,
        attempts_allowed=20,
        slots=[{"pool": {"templates": ["params-choice"]}}],
    )
    positions = set()
    for _ in range(12):
        state = start(world.lea, quiz["id"]).json()
        drawn = keys(state["id"])[1]
        (question,) = state["questions"]
        texts = [o["text"] for o in question["options"]]
        positions.add(texts.index(drawn.answer_text()))
        api(world.lea).post(f"/api/v1/attempts/{state['id']}/submit/")
    assert len(positions) > 1, positions  # 1 in 3**11 to fail by chance


def test_a_quiz_an_assignment_holds_is_not_deleted(world, quiz_course):
    quiz = create(world)
    made = api(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/assignments/",
        {
            "title": "Week 1",
            "opens_at": NOW.isoformat(),
            "due_at": NOW.isoformat(),
            "items": [{"kind": "quiz", "slug": str(quiz["id"])}],
        },
        format="json",
    )
    assert made.status_code == 201, made.json()
    refused = api(world.owner).delete(f"/api/v1/quizzes/{quiz['id']}/")
    assert refused.status_code == 409 and "assignment" in refused.json()["detail"]
    unheld = create(world)
    assert (
        api(world.owner).delete(f"/api/v1/quizzes/{unheld['id']}/").status_code == 204
    )
