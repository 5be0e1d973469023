"""Quiz pages without JavaScript: the intro, starting, answering, submitting.

Plain form posts through Django's test client, as a browser without
JavaScript sends them; the keys are computed on the server side (as in
test_quiz_api.py) and searched for in every page before they may show.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from teaching.models import QuizAttempt
from teaching.quizzes.views import NUMBER_FORMS
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import NOW, api, create, keys, right_answers

pytestmark = pytest.mark.django_db


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def secrets(attempt_id: int) -> list[str]:
    """What must not reach the page before the policy allows: every
    explanation, every numeric key (as written in feedback), the marks."""
    drawn = keys(attempt_id).values()
    found = [d.explanation for d in drawn if d.explanation]
    found += [f"{d.answer:,}" for d in drawn if d.kind == "numeric"]
    found += [str(d.answer) for d in drawn if d.kind == "numeric"]
    return [*found, "(right answer)", 'class="verdict', "The right answer is"]


def assert_no_keys(html: str, attempt_id: int) -> None:
    html = html.replace(NUMBER_FORMS, "")  # the hint's examples are GPT-2's count
    for secret in secrets(attempt_id):
        assert secret not in html, secret


def started(client, quiz_id: int) -> int:
    response = client.post(f"/quizzes/{quiz_id}/start/")
    assert response.status_code == 302, response.status_code
    assert response["Location"].startswith("/quizzes/attempts/")
    return int(response["Location"].rstrip("/").rsplit("/", 1)[1])


def test_a_learner_takes_a_quiz_with_plain_forms(world, quiz_course):
    # Slots in order (no shuffle): 1 the template (numeric, 2 points),
    # 2 the choice self-check, 3 the numeric self-check.
    quiz = create(world, shuffle=False)
    lea = browser(world.lea)
    intro = page(lea, f"/quizzes/{quiz['id']}/")
    assert "Quiz 1" in intro and "30 minutes" in intro
    assert "0 of 1" in intro and "The best attempt counts" in intro
    assert "once you have submitted your last attempt" in intro
    assert "Start attempt 1" in intro and "Preview" not in intro

    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    html = page(lea, url)
    for n in (1, 2, 3):
        assert f'id="question-{n}"' in html and f"<legend>Question {n} " in html
    assert 'name="q-2" value="0"' in html and 'name="q-2" value="1"' in html
    assert 'inputmode="decimal"' in html and NUMBER_FORMS in html
    assert "Time left" in html and re.search(r"(29|30) min \d\d s", html)
    assert 'data-server-time="' in html and "js/quiz_attempt.js" in html
    assert_no_keys(html, attempt_id)

    right = right_answers(attempt_id)
    saved = lea.post(url, {"q-1": "1,234", "q-2": str(right["2"]), "action": "save"})
    assert saved.status_code == 302
    html = page(lea, url)
    assert 'value="1,234"' in html
    assert f'name="q-2" value="{right["2"]}" checked' in html
    assert "Saved 2 answers" in html
    assert_no_keys(html, attempt_id)

    # A malformed number: the error names the question, the learner's text
    # stays in the field, and the saved answer stays saved.
    bad = lea.post(url, {"q-1": "12x", "q-2": str(right["2"]), "action": "save"})
    assert bad.status_code == 400
    html = bad.content.decode()
    assert "Question 1 (slot 1):" in html and "is not a number" in html
    assert 'value="12x"' in html and "Your saved answer is still" in html
    assert QuizAttempt.objects.get(pk=attempt_id).answers["1"]["value"] == "1,234"
    assert_no_keys(html, attempt_id)

    # Submitting with a malformed answer is held back until it is fixed.
    held = lea.post(url, {"q-1": "12x", "action": "submit"})
    assert held.status_code == 400 and "Not submitted yet" in held.content.decode()
    assert QuizAttempt.objects.get(pk=attempt_id).state == "in_progress"

    done = lea.post(
        url,
        {
            "q-1": right["1"],
            "q-2": str(right["2"]),
            "q-3": right["3"],
            "action": "submit",
        },
    )
    assert done.status_code == 302
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.state == "submitted" and attempt.score == 1.0
    html = page(lea, url)
    assert "Your attempt was submitted." in html
    assert "4 of 4 points" in html and "100%" in html
    assert "b is right." in html and "12d^2 + 13d." in html
    assert "(right answer)" in html and html.count("<strong>Right.</strong>") == 3
    assert 'name="q-1"' not in html  # read-only now
    intro = page(lea, f"/quizzes/{quiz['id']}/")
    assert "1 of 1" in intro and "100%" in intro and "used all 1 attempt" in intro

    # Someone else's attempt, or a quiz of another cohort: 404.
    page(browser(world.leo), url, status=404)
    assert browser(world.leo).post(url, {"action": "submit"}).status_code == 404
    page(browser(world.max), f"/quizzes/{quiz['id']}/", status=404)
    assert browser(world.max).post(f"/quizzes/{quiz['id']}/start/").status_code == 404


def test_an_attempt_that_cannot_start_says_why(world, quiz_course):
    later = create(world, opens_at=(NOW + timedelta(hours=2)).isoformat())
    lea = browser(world.lea)
    intro = page(lea, f"/quizzes/{later['id']}/")
    assert "has not opened yet" in intro and 'id="start"' not in intro
    refused = lea.post(f"/quizzes/{later['id']}/start/", follow=True)
    html = refused.content.decode()
    assert refused.redirect_chain[-1][0] == f"/quizzes/{later['id']}/"
    assert "The attempt could not start: This quiz opens at" in html
    assert 'role="alert"' in html
    # An archived quiz is gone for learners.
    api(world.owner).patch(
        f"/api/v1/quizzes/{later['id']}/", {"archived": True}, format="json"
    )
    page(lea, f"/quizzes/{later['id']}/", status=404)
    # The home page lists open and upcoming quizzes, then recently closed ones
    # (their results are found there; tests/quiz/test_quiz_results_listing.py).
    open_ = create(world, title="Open quiz")
    closed = create(
        world,
        title="Closed quiz",
        opens_at=(NOW - timedelta(days=2)).isoformat(),
        closes_at=(NOW - timedelta(days=1)).isoformat(),
    )
    upcoming = create(
        world, title="Upcoming quiz", opens_at=(NOW + timedelta(hours=3)).isoformat()
    )
    home = page(lea, "/")
    assert "Your quizzes" in home and f'href="/quizzes/{open_["id"]}/"' in home
    assert f'href="/quizzes/{upcoming["id"]}/"' in home
    assert home.index("Open quiz") < home.index("Upcoming quiz")
    assert home.index("Upcoming quiz") < home.index("Closed quiz")
    listed = home[home.index(f'id="home-quiz-{closed["id"]}"') :].split("</li>")[0]
    assert "Closed " in listed and "not attempted" in listed
    assert "Quiz 1" not in home  # archived
    assert "Your quizzes" not in page(browser(world.max), "/")


def test_after_the_deadline_a_post_says_time_is_up_and_submits(world, quiz_course):
    quiz = create(world, shuffle=False)
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    right = right_answers(attempt_id)
    lea.post(url, {"q-2": str(right["2"]), "action": "save"})
    QuizAttempt.objects.filter(pk=attempt_id).update(
        deadline=timezone.now() - timedelta(seconds=1)
    )
    late = lea.post(
        url, {"q-2": str(right["2"]), "q-3": right["3"], "action": "save"}, follow=True
    )
    html = late.content.decode()
    assert "Time is up" in html and "Your earlier answers were submitted" in html
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.state == "submitted" and attempt.submitted_by == "deadline"
    assert "3" not in attempt.answers and attempt.points == 1.0
    assert "1 of 4 points" in html

    # The countdown's own submit at 0, with every answer already saved.
    leo = browser(world.leo)
    other = started(leo, quiz["id"])
    QuizAttempt.objects.filter(pk=other).update(
        deadline=timezone.now() - timedelta(seconds=1)
    )
    closed = leo.post(f"/quizzes/attempts/{other}/", {"action": "submit"}, follow=True)
    assert "Time is up: your attempt was submitted" in closed.content.decode()
    assert QuizAttempt.objects.get(pk=other).submitted_by == "deadline"


def test_immediate_feedback_checks_one_answer_and_makes_it_final(world, quiz_course):
    quiz = create(world, shuffle=False, feedback="immediate")
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    html = page(lea, url)
    assert html.count('name="check"') == 3 and 'value="save"' not in html
    assert_no_keys(html, attempt_id)
    right = right_answers(attempt_id)
    checked = lea.post(url, {"q-2": str(right["2"]), "q-3": "5", "check": "2"})
    # The other typed answer is kept in its field, unsaved.
    assert checked.status_code == 200
    html = checked.content.decode()
    assert 'id="fb-2"' in html and "b is right." in html
    assert 'id="fb-3"' not in html and 'value="5"' in html
    assert 'name="q-2"' not in html and "(your answer)" in html
    assert QuizAttempt.objects.get(pk=attempt_id).answers.keys() == {"2"}
    again = lea.post(url, {"q-2": "0", "check": "2"})
    assert again.status_code == 400 and "final" in again.content.decode()
    empty = lea.post(url, {"q-1": "", "check": "1"})
    assert (
        empty.status_code == 400
        and "answer it before checking" in empty.content.decode()
    )
    # Enter in a field (no Check pressed) saves nothing.
    enter = lea.post(url, {"q-1": "12", "action": "enter"})
    assert "Nothing was saved" in enter.content.decode()
    assert QuizAttempt.objects.get(pk=attempt_id).answers.keys() == {"2"}


def test_after_close_feedback_waits_for_the_close(world, quiz_course):
    quiz = create(world, shuffle=False, feedback="after_close")
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    right = right_answers(attempt_id)
    lea.post(url, {"q-2": str(right["2"]), "action": "submit"})
    html = page(lea, url)
    assert "appear once the quiz has closed" in html and 'id="score"' not in html
    assert_no_keys(html, attempt_id)
    intro = page(lea, f"/quizzes/{quiz['id']}/")
    assert "once the quiz has closed for everyone" in intro
    assert "%" not in intro.split("<table")[1]


def test_an_instructor_previews_with_the_keys_and_restarts(world, quiz_course):
    quiz = create(world)
    ian = browser(world.owner)
    intro = page(ian, f"/quizzes/{quiz['id']}/")
    assert ">Preview</button>" in intro and "your attempts here are previews" in intro
    first = started(ian, quiz["id"])
    assert QuizAttempt.objects.get(pk=first).preview
    html = page(ian, f"/quizzes/attempts/{first}/")
    assert "preview 1" in html and html.count("The right answer is") == 3
    assert "Restart preview" in page(ian, f"/quizzes/{quiz['id']}/")
    response = ian.post(f"/quizzes/{quiz['id']}/start/", {"restart": "1"})
    second = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    assert second != first
    assert QuizAttempt.objects.get(pk=first).state == "submitted"
