"""The instructor's tools as plain forms (no JavaScript): close now with a
confirmation, reopen for one learner, review an attempt and set a
question's score, regrade one question with a dry run, the bank's search
page, and slots described in words."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from teaching.models import QuizAccommodation, QuizAttempt
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, create, right_answers, scored_questions

pytestmark = pytest.mark.django_db


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def sat(quiz_id, user, answers=None) -> int:
    client = api(user)
    state = client.post(f"/api/v1/quizzes/{quiz_id}/attempts/").json()
    given = right_answers(state["id"]) if answers is None else answers
    client.patch(f"/api/v1/attempts/{state['id']}/", {"answers": given}, format="json")
    client.post(f"/api/v1/attempts/{state['id']}/submit/")
    return state["id"]


def two_slot_quiz(world, **changes):
    questions = scored_questions()
    slots = [
        {"points": 1, "pool": {"questions": [questions["choice"].pk]}},
        {"points": 2, "draw": 2, "pool": {"lessons": ["first-lesson"]}},
    ]
    return create(world, slots=slots, shuffle=False, **changes)


def test_the_quiz_page_says_slots_in_words_and_links_each_attempt(world, quiz_course):
    quiz = two_slot_quiz(world)
    attempt = sat(quiz["id"], world.lea)
    page = browser(world.owner).get(reverse("instructor-quiz", args=[quiz["id"]]))
    html = page.content.decode()
    assert "1 point: one question drawn from 1" in html
    # The lesson brings its 2 scored self-checks and its template: 3.
    assert "2 points shared by 2 questions drawn from 3 (1 point each)" in html
    assert reverse("instructor-quiz-attempt", args=[attempt]) in html
    assert 'id="close-link"' in html and 'id="reopen-form"' in html


def test_close_now_asks_first_then_closes(world, quiz_course):
    quiz = two_slot_quiz(world)
    running = api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    owner = browser(world.owner)
    url = reverse("instructor-quiz-close", args=[quiz["id"]])
    confirm = owner.get(url).content.decode()
    assert "Close “Quiz 1” now?" in confirm and "<strong>1</strong> attempt" in confirm
    assert QuizAttempt.objects.get(pk=running["id"]).state == "in_progress"
    done = owner.post(url, follow=True).content.decode()
    assert "is closed for everyone; 1 running attempt submitted" in done
    assert QuizAttempt.objects.get(pk=running["id"]).state == "submitted"
    assert 'id="close-link"' not in done  # nothing left to close
    assert browser(world.lea).get(url).status_code == 403


def test_reopen_for_one_learner_from_the_quiz_page(world, quiz_course):
    quiz = two_slot_quiz(world)
    sat(quiz["id"], world.lea)
    owner = browser(world.owner)
    url = reverse("instructor-quiz-reopen", args=[quiz["id"]])
    later = (timezone.now() + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    form = {"learner": "lea", "closes_at": later, "tz": "UTC"}
    bad = owner.post(url, {**form, "extra_attempts": "two"}, follow=True)
    assert "Not reopened (extra_attempts)" in bad.content.decode()
    missing = owner.post(url, {"learner": "lea", "tz": "UTC"}, follow=True)
    assert "Not reopened (closes_at)" in missing.content.decode()
    done = owner.post(url, {**form, "extra_attempts": "1"}, follow=True)
    done = done.content.decode()
    assert "Reopened for lea" in done and "1 extra attempt" in done
    assert QuizAccommodation.objects.get(learner=world.lea).extra_attempts == 1
    started = api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/attempts/")
    assert started.status_code == 201


def test_an_instructor_reviews_an_attempt_and_sets_a_score_by_form(world, quiz_course):
    quiz = two_slot_quiz(world)
    attempt = sat(quiz["id"], world.lea, answers={"1": 0})
    owner = browser(world.owner)
    url = reverse("instructor-quiz-attempt", args=[attempt])
    html = owner.get(url).content.decode()
    assert "lea: attempt 1" in html and "(their answer)" in html
    assert (
        "(right answer)" in html
        and html.count('class="inline-form override-form"') == 3
    )
    bad = owner.post(url, {"question": "1", "points": "9", "comment": "x"})
    assert bad.status_code == 400 and "points from 0 to 1" in bad.content.decode()
    set_ = owner.post(
        url,
        {"question": "1", "points": "1", "comment": "both readings hold"},
        follow=True,
    )
    assert "Question 1&#x27;s score saved" in set_.content.decode()
    assert QuizAttempt.objects.get(pk=attempt).points == 1.0
    assert "both readings hold" in set_.content.decode()
    cleared = owner.post(url, {"question": "1", "action": "clear"}, follow=True)
    assert cleared.status_code == 200
    assert QuizAttempt.objects.get(pk=attempt).points == 0.0
    assert browser(world.lea).get(url).status_code == 403


def test_regrade_one_question_previews_then_applies_or_undoes(world, quiz_course):
    quiz = two_slot_quiz(world)
    attempt = sat(quiz["id"], world.lea, answers={"1": 0})
    owner = browser(world.owner)
    listing = owner.get(reverse("instructor-quiz-questions", args=[quiz["id"]]))
    choice = f"q:{scored_questions()['choice'].pk}"
    assert choice in listing.content.decode()
    url = reverse("instructor-quiz-question-regrade", args=[quiz["id"]])
    form = owner.get(url, {"question": choice}).content.decode()
    assert 'id="regrade-apply"' not in form  # a dry run comes first
    preview = owner.post(
        url, {"question": choice, "action": "key", "answer": "0", "step": "preview"}
    ).content.decode()
    assert (
        "Dry run: nothing is saved yet" in preview and 'id="regrade-apply"' in preview
    )
    assert QuizAttempt.objects.get(pk=attempt).points == 0.0
    bad = owner.post(
        url, {"question": choice, "action": "key", "answer": "9", "step": "preview"}
    )
    assert bad.status_code == 400 and "no option 9" in bad.content.decode()
    applied = owner.post(
        url, {"question": choice, "action": "key", "answer": "0", "step": "apply"},
        follow=True,
    ).content.decode()  # fmt: skip
    assert "1</strong> of 1 attempts changed" in applied
    assert QuizAttempt.objects.get(pk=attempt).points == 1.0
    undone = owner.post(url, {"question": choice, "step": "undo"}, follow=True)
    assert undone.status_code == 200
    assert QuizAttempt.objects.get(pk=attempt).points == 0.0


def test_the_bank_page_searches_without_javascript(world, quiz_course):
    owner = browser(world.owner)
    url = reverse("instructor-quiz-bank", args=[world.cohort.pk])
    html = owner.get(url, {"q": "parameters", "kind": "numeric"}).content.decode()
    assert "template:params-of-a-model" in html and "Practice, not secure" in html
    bad = owner.get(url, {"kind": "essay"})
    assert bad.status_code == 400 and "kind is one of" in bad.content.decode()
    builder = owner.get(reverse("instructor-quiz-new", args=[world.cohort.pk]))
    page = builder.content.decode()
    assert (
        'id="slot-builder"' in page
        and "hidden" in page.split('id="slot-builder"')[1][:200]
    )
    assert 'name="slots"' in page and "js/quiz_builder.js" in page
