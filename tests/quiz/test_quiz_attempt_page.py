"""The learner's attempt page as an exam page: plain forms and the API.

Code questions sent back by a browser form (CRLF line endings), flags for
review (a checkbox per question in the form, `{"flags": [...]}` in the
API), the summary before submitting, and on the result the named mistake,
an instructor's regrade and score, each question's score, and a page that
waits for a code verdict by itself. tests/browser/test_quiz_flow.py takes
the same page in Chromium, by keyboard.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from grader.models import Submission
from quiz.models import Question
from teaching.models import QuizAttempt
from teaching.quizzes import views
from teaching.quizzes.attempt_regrade import regrade_run
from teaching.quizzes.models import QuizItemOverride, QuizQuestionChange
from teaching.quizzes.scoring import code_verdicts
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, create, keys, right_answers

pytestmark = pytest.mark.django_db

STARTER = "def f():\n    ...\n"  # ex-a's, from the course fixture
CODE = "def f():\n    return 1\n"


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def started(client, quiz_id: int) -> int:
    response = client.post(f"/quizzes/{quiz_id}/start/")
    assert response.status_code == 302, response.status_code
    return int(response["Location"].rstrip("/").rsplit("/", 1)[1])


def code_quiz(world, **changes) -> dict:
    """1 a choice self-check, 2 ex-a's code."""
    choice = Question.objects.get(lesson__slug="first-lesson", kind="choice")
    return create(
        world,
        shuffle=False,
        slots=[
            {"points": 1, "pool": {"questions": [choice.pk]}},
            {"points": 1, "pool": {"exercises": ["ex-a"]}},
        ],
        **changes,
    )


def crlf(text: str) -> str:
    """As a browser's form sends a textarea."""
    return text.replace("\n", "\r\n")


def expire(attempt_id: int) -> None:
    QuizAttempt.objects.filter(pk=attempt_id).update(
        deadline=timezone.now() - timedelta(seconds=1)
    )


def patch(user, attempt_id: int, body: dict):
    return api(user).patch(f"/api/v1/attempts/{attempt_id}/", body, format="json")


# Code questions ----------------------------------------------------------------


def test_an_untouched_starter_in_crlf_is_no_answer_even_at_the_deadline(
    world, quiz_course, monkeypatch
):
    quiz = code_quiz(world)
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    html = page(lea, url)
    # The editor (CodeMirror) replaces the textarea, which stays the fallback.
    assert "data-code-editor" in html and "vendor/editor.js" in html
    assert "css/editor.css" in html and "Escape, then Tab" in html
    assert (
        'name="q-2" class="code-answer"' in html and f"\n{STARTER}</textarea>" in html
    )

    # The form sends the starter back untouched, in CRLF: not an answer.
    saved = lea.post(url, {"q-2": crlf(STARTER), "action": "save"}, follow=True)
    assert "Nothing had changed since your last save." in saved.content.decode()
    assert QuizAttempt.objects.get(pk=attempt_id).answers == {}
    # Code typed in CRLF is saved with Unix line endings.
    lea.post(url, {"q-2": crlf(CODE), "action": "save"})
    assert QuizAttempt.objects.get(pk=attempt_id).answers["2"]["value"] == CODE
    # Back to the starter: no answer again, through the API too.
    assert (
        patch(world.lea, attempt_id, {"answers": {"2": crlf(STARTER)}}).json()[
            "questions"
        ][1]["answer"]
        is None
    )

    # At the deadline the countdown posts the whole form, starter included:
    # "time is up", never "arrived after the deadline", and nothing graded.
    expire(attempt_id)
    late = lea.post(
        url, {"q-2": crlf(STARTER), "flags-shown": "1", "action": "submit"}, follow=True
    )
    html = late.content.decode()
    assert "Time is up: your attempt was submitted with the answers saved" in html
    assert "arrived after the deadline" not in html
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.state == "submitted" and attempt.submitted_by == "deadline"
    assert (attempt.answers.get("2") or {}).get("value") is None
    assert not Submission.objects.filter(user=world.lea).exists()
    assert not attempt.code_answers.exists() and not attempt.code_waiting
    assert "You did not answer this question." in html

    # Without a built bundle the page keeps the plain textarea.
    monkeypatch.setattr(views.finders, "find", lambda path: None)
    leo = browser(world.leo)
    other = started(leo, quiz["id"])
    plain = page(leo, f"/quizzes/attempts/{other}/")
    assert "vendor/editor.js" not in plain and 'name="q-2"' in plain


def test_checking_an_untouched_starter_asks_for_an_answer(world, quiz_course):
    quiz = code_quiz(world, feedback="immediate")
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    checked = lea.post(url, {"q-2": crlf(STARTER), "check": "2"})
    assert checked.status_code == 400
    assert "Question 2: answer it before checking." in checked.content.decode()
    assert not Submission.objects.filter(user=world.lea).exists()
    assert QuizAttempt.objects.get(pk=attempt_id).answers == {}


# Flags for review --------------------------------------------------------------


def test_flags_with_plain_forms(world, quiz_course):
    quiz = create(world, shuffle=False)  # 1 numeric, 2 choice, 3 numeric
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    html = page(lea, url)
    for n in (1, 2, 3):
        assert f'name="flag" value="{n}" id="flag-{n}">' in html
        assert f'<a href="#question-{n}" id="nav-{n}" class="quiz-nav-link">' in html
    assert 'name="flags-shown"' in html and 'aria-label="Questions"' in html

    # Ticked boxes replace the flags; bad values are left out.
    form = {"flags-shown": "1", "flag": ["3", "1", "x", "99", "1"], "action": "save"}
    saved = lea.post(url, form, follow=True)
    assert "Saved your flags for review" in saved.content.decode()
    assert QuizAttempt.objects.get(pk=attempt_id).flags == [1, 3]
    html = page(lea, url)
    assert 'value="1" id="flag-1" checked' in html and 'id="flag-2">' in html
    assert 'id="nav-1" class="quiz-nav-link is-flagged"' in html
    assert (
        '<span class="visually-hidden nav-words">, not answered, flagged</span>'
        in html.split('id="nav-1"')[1].split("</a>")[0]
    )
    # An answer and an unticked box: both saved; the nav shows it answered.
    right = right_answers(attempt_id)
    lea.post(url, {"flags-shown": "1", "flag": "3", "q-2": str(right["2"])})
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.flags == [3] and attempt.answers["2"]["value"] == right["2"]
    assert 'id="nav-2" class="quiz-nav-link is-answered"' in page(lea, url)
    # A post without the boxes (the summary's) leaves the flags alone.
    again = lea.post(url, {"action": "save"}, follow=True)
    assert "Nothing had changed" in again.content.decode()
    assert QuizAttempt.objects.get(pk=attempt_id).flags == [3]

    # After the deadline a flag is refused like an answer; the attempt is
    # submitted with the flags it had.
    expire(attempt_id)
    late = lea.post(url, {"flags-shown": "1", "action": "save"}, follow=True)
    assert "Time is up" in late.content.decode()
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.state == "submitted" and attempt.flags == [3]
    assert 'name="flag"' not in late.content.decode()


def test_flags_through_the_api(world, quiz_course):
    quiz = create(world, shuffle=False)
    attempt_id = started(browser(world.lea), quiz["id"])
    flagged = patch(world.lea, attempt_id, {"flags": [3, 1, 3]})
    assert flagged.status_code == 200, flagged.json()
    body = flagged.json()
    assert body["flags"] == [1, 3]
    assert [q["flagged"] for q in body["questions"]] == [True, False, True]
    # Answers alone leave the flags; both at once save both.
    right = right_answers(attempt_id)
    both = patch(world.lea, attempt_id, {"answers": {"2": right["2"]}, "flags": [2]})
    assert both.status_code == 200 and both.json()["flags"] == [2]
    assert both.json()["answered"] == 1
    alone = patch(world.lea, attempt_id, {"answers": {"3": "12"}})
    assert alone.json()["flags"] == [2]
    assert patch(world.lea, attempt_id, {"flags": []}).json()["flags"] == []

    # Bad flags: a 400 naming the field, and nothing saved.
    for bad in ([99], [0], ["x"], [True], [1.5], "1,2", {"1": True}, None):
        response = patch(world.lea, attempt_id, {"flags": bad})
        assert response.status_code == 400, (bad, response.json())
        assert "flags" in response.json(), (bad, response.json())
    assert QuizAttempt.objects.get(pk=attempt_id).flags == []
    nothing = patch(world.lea, attempt_id, {})
    assert nothing.status_code == 400 and "answers" in nothing.json()
    # Someone else's attempt: 404. After the deadline: 409, as for answers.
    assert patch(world.leo, attempt_id, {"flags": [1]}).status_code == 404
    expire(attempt_id)
    late = patch(world.lea, attempt_id, {"flags": [1]})
    assert late.status_code == 409 and "Time is up" in late.json()["detail"]
    assert QuizAttempt.objects.get(pk=attempt_id).flags == []
    assert patch(world.lea, attempt_id, {"flags": [1]}).status_code == 409

    schema = api(world.lea).get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    text = schema.content.decode()
    assert "The question numbers flagged for review" in text


# The summary before submitting ---------------------------------------------------


def test_the_summary_lists_the_questions_and_submits(world, quiz_course):
    quiz = create(world, shuffle=False)  # 1 numeric, 2 choice, 3 numeric
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    review = f"{url}summary/"
    html = page(lea, url)
    # The attempt page leads there (the bar and the end of the form); it no
    # longer submits by itself.
    assert html.count('name="action" value="review"') == 2
    assert 'value="submit"' not in html

    right = right_answers(attempt_id)
    # Review and submit: saves what changed, then the summary.
    went = lea.post(
        url,
        {"q-2": str(right["2"]), "flags-shown": "1", "flag": "3", "action": "review"},
    )
    assert went.status_code == 302 and went["Location"] == review
    html = page(lea, review)
    assert "Saved 1 answer at" in html
    assert "1 of 3</strong> questions answered" in html
    assert '<strong class="num">2</strong> not answered' in html
    assert (
        f'href="{url}#question-1">question 1</a>, <a href="{url}#question-3">' in html
    )
    assert 'id="review-flagged">Flagged for review: <a href' in html
    assert 'id="summary-2" class="is-answered"' in html
    assert 'id="summary-3" class="is-unanswered is-flagged"' in html
    assert "Your answer: b" in html  # the option as shown
    assert 'id="submit-attempt"' in html and f'action="{url}"' in html
    assert 'data-deadline="' in html and "js/quiz_attempt.js" in html
    assert "The right answer" not in html and "b is right." not in html

    # A malformed answer keeps the learner on the attempt page, saying why.
    bad = lea.post(url, {"q-1": "12x", "action": "review"})
    assert bad.status_code == 400
    assert "Fix or clear the answers marked below" in bad.content.decode()

    # Submit from the summary; then the summary leads to the result.
    done = lea.post(url, {"action": "submit"}, follow=True)
    assert "Your attempt was submitted." in done.content.decode()
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.state == "submitted" and attempt.flags == [3]
    gone = lea.get(review)
    assert gone.status_code == 302 and gone["Location"] == url
    page(browser(world.leo), review, status=404)


def test_the_summary_with_immediate_feedback_saves_no_unchecked_answer(
    world, quiz_course
):
    quiz = create(world, shuffle=False, feedback="immediate")
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    went = lea.post(
        url, {"q-3": "5", "flags-shown": "1", "flag": "3", "action": "review"}
    )
    assert went.status_code == 302
    html = page(lea, f"{url}summary/")
    assert "Not saved: what you typed in question 3." in html
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    assert attempt.answers == {} and attempt.flags == [3]


# The result --------------------------------------------------------------------


def test_the_result_names_the_mistake_and_the_instructors_changes(world, quiz_course):
    quiz = create(world, shuffle=False)  # 1 template (2 points), 2 choice, 3 numeric
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    drawn = keys(attempt_id)
    right = right_answers(attempt_id)
    wrong = str(drawn[1].wrong[0].number)  # the tied head counted twice
    lea.post(
        url, {"q-1": wrong, "q-2": str(right["2"]), "q-3": "5", "action": "submit"}
    )
    html = page(lea, url)
    assert 'id="mistake-1"' in html and html.count('class="mistakes quiz-mistake"') == 1
    mistake = html.split('id="mistake-1"')[1].split("</div>")[0]
    assert "Your answer is what you get if you counted the tied head twice." in mistake
    assert "<strong>Why:</strong> Counted the tied head as a second matrix." in mistake
    assert 'href="/lessons/first-lesson/">First Lesson</a>' in mistake
    assert (
        'id="qscore-1">Your score on this question: <span class="num">0 of 2 points'
        in html
    )
    assert (
        'id="qscore-2">Your score on this question: <span class="num">1 of 1 point'
        in html
    )

    # The instructor gives everyone the choice, and lea half of question 3.
    attempt = QuizAttempt.objects.get(pk=attempt_id)
    QuizQuestionChange.objects.create(
        quiz_id=quiz["id"],
        ref=attempt.items[0]["ref"],
        action=QuizQuestionChange.Action.FULL_CREDIT,
        created_by=world.owner,
    )
    QuizItemOverride.objects.create(
        attempt=attempt,
        item=3,
        fraction=0.5,
        comment="Close enough.",
        set_by=world.owner,
    )
    regrade_run(quiz=attempt.quiz, actor=world.owner)
    html = page(lea, url)
    assert (
        'id="regraded-1"><strong>Changed by your instructor for this quiz:</strong> '
        "Full credit for everyone on this question." in html
    )
    assert 'id="qscore-1">Your score on this question: <span class="num">2 of 2' in html
    assert (
        'id="override-3"><strong>Your instructor set your score on this question'
        '</strong> to <span class="num">0.5 of 1 point</span>: “Close enough.”' in html
    )
    assert (
        'id="qscore-3">Your score on this question: <span class="num">0.5 of 1' in html
    )
    assert "data-poll" not in html and "js/quiz_attempt.js" not in html


def test_a_result_waiting_for_a_code_verdict_polls_for_it(world, quiz_course):
    quiz = code_quiz(world)
    lea = browser(world.lea)
    attempt_id = started(lea, quiz["id"])
    url = f"/quizzes/attempts/{attempt_id}/"
    lea.post(url, {"q-2": crlf(CODE), "action": "submit"})
    (submission,) = Submission.objects.filter(user=world.lea)
    assert submission.code == CODE and submission.status == "queued"
    html = page(lea, url)
    assert f'data-poll="/api/v1/attempts/{attempt_id}/"' in html
    assert 'id="grading-status" role="status"' in html and "js/quiz_attempt.js" in html
    assert "Reload the page to see it." in html  # in <noscript>
    assert "The verdict shows here when it arrives" in html
    Submission.objects.filter(pk=submission.pk).update(
        status="failed",
        score=0.0,
        checks=[
            {
                "name": "returns one",
                "passed": False,
                "message": "f() returned None.",
                "diagnosis": "tied-head-counted-twice",
            }
        ],
    )
    code_verdicts([world.lea.pk])
    html = page(lea, url)
    assert "data-poll" not in html and "Not passed." in html
    assert (
        "Likely mistake (the first failed check):</strong> f() returned None." in html
    )
    assert "<strong>Why:</strong> Counted the tied head as a second matrix." in html
