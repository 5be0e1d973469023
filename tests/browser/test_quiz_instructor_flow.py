"""In Debian's Chromium, keyboard only: an instructor builds a quiz without
typing an id, a learner takes it, and the instructor closes it early,
reviews the attempt, sets one question's score, reopens it for one
learner and regrades one question with a dry run; every surface then
shows the same score.

The builder and closing run on a desktop window, the review, regrade and
reopen on a 390 px phone: each control in at least one, every page loaded
in both (no sideways scrolling). One browser, one journey: a browser is
expensive. The learner's part goes through the API (its pages have their
own journey, test_quiz_flow.py).
"""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from teaching.models import Quiz, QuizAttempt
from tests.browser.test_accessibility import MODES, log_in_by_cookie
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, keys

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
# Where keyboard focus is: the element's id, or its aria-label, or its text.
FOCUSED = """() => {
    const e = document.activeElement;
    return [e.id, e.getAttribute('aria-label') || '', (e.textContent || '').trim()];
}"""


def tab_to(page, wanted: str, *, limit: int = 120) -> None:
    """Press Tab until the focused element's id, label or text is `wanted`."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if wanted in page.evaluate(FOCUSED):
            return
    raise AssertionError(f"Tab never reached {wanted!r}; at {page.evaluate(FOCUSED)}")


def fits(page) -> None:
    width, screen = page.evaluate(
        "() => [document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert width <= screen, f"{page.url}: {width} px wide on a {screen} px screen"


def test_an_instructor_builds_closes_reviews_and_regrades_a_quiz(
    browser, live_server, world, quiz_course
):
    base = live_server.url
    desktop = browser.new_context(locale="en-US", **MODES["desktop"])
    phone = browser.new_context(locale="en-US", **MODES["phone"])
    for context in (desktop, phone):
        log_in_by_cookie(context, base, world.owner)
    page = desktop.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    # Build: the picker, not an id. A template worth 2, a self-check, a code
    # exercise; the slot text fills itself.
    page.goto(f"{base}/instructor/cohorts/{world.cohort.pk}/quizzes/new/")
    page.wait_for_selector("#slot-builder:not([hidden])")
    page.focus("#q-title")  # the first field: where Tab would land anyway
    page.keyboard.type("Week 3 check")
    tab_to(page, "pick-q")
    page.keyboard.type("parameters of")
    page.keyboard.press("Enter")  # searches; the quiz form is not sent
    page.wait_for_selector("#pick-results .bank-result")
    tab_to(page, "Points for “Parameters of a model”")
    page.keyboard.press("Control+A")
    page.keyboard.type("2")
    page.keyboard.press("Tab")
    assert "Add “Parameters of a model” as a slot" in page.evaluate(FOCUSED)
    page.keyboard.press("Enter")
    page.wait_for_selector("#slot-status:has-text('Added slot 1')")
    for words, title in (("Pick one", "First Lesson"), ("Ex A", "Ex A")):
        tab_to(page, "pick-q")
        page.keyboard.press("Control+A")
        page.keyboard.type(words)
        page.keyboard.press("Enter")
        page.wait_for_selector(f"#pick-results .bank-result:has-text('{title}')")
        tab_to(page, f"Add “{title}” as a slot")
        page.keyboard.press("Enter")
    page.wait_for_selector("#slot-status:has-text('Added slot 3')")
    assert page.locator("#slot-list .slot-item").count() == 3
    assert "2 points for one question" in page.text_content("#slot-list")
    tab_to(page, "Create quiz")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/instructor/quizzes/*/")
    quiz = Quiz.objects.get(title="Week 3 check")
    assert [(s.points, s.pool) for s in quiz.slots.all()] == [
        (2.0, {"templates": ["params-of-a-model"]}),
        (1.0, {"questions": [quiz.slots.all()[1].pool["questions"][0]]}),
        (1.0, {"exercises": ["ex-a"]}),
    ]
    slots_text = page.text_content("#quiz-slots")
    assert "2 points: one question drawn from 1" in slots_text
    assert "practice, not secure" in slots_text  # the self-check and the exercise
    fits(page)

    # lea takes it (the API, as her pages do): the template and the choice
    # right, no code; leo starts and is still answering when it closes.
    lea = api(world.lea)
    state = lea.post(f"/api/v1/quizzes/{quiz.pk}/attempts/").json()
    drawn = keys(state["id"])
    answers = {}
    for n, d in drawn.items():
        item = QuizAttempt.objects.get(pk=state["id"]).items[n - 1]
        if d.kind == "choice":
            answers[str(n)] = item["order"].index(d.correct)
        elif d.kind == "numeric":
            answers[str(n)] = str(d.answer)
    lea.patch(f"/api/v1/attempts/{state['id']}/", {"answers": answers}, format="json")
    lea.post(f"/api/v1/attempts/{state['id']}/submit/")
    leo = api(world.leo).post(f"/api/v1/quizzes/{quiz.pk}/attempts/").json()

    # Close now, with its confirmation.
    page.goto(f"{base}/instructor/quizzes/{quiz.pk}/")
    tab_to(page, "close-link")
    page.keyboard.press("Enter")
    page.wait_for_selector("#close-confirm")
    assert "1</strong> attempt" in page.content()
    tab_to(page, "close-confirm")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=is closed for everyone; 1 running attempt submitted")
    assert QuizAttempt.objects.get(pk=leo["id"]).state == "submitted"

    # On a phone: review lea's attempt and give half a point on the code
    # question she left (an answer sent by mail, say).
    small = phone.new_page()
    small.on("pageerror", lambda error: errors.append(str(error)))
    small.goto(f"{base}/instructor/quizzes/{quiz.pk}/")
    fits(small)
    tab_to(small, "Review lea's attempt 1")
    small.keyboard.press("Enter")
    small.wait_for_selector("#review-summary")
    fits(small)
    code = next(n for n, d in drawn.items() if d.kind == "code")
    tab_to(small, f"points-{code}")
    small.keyboard.type("0.5")
    small.keyboard.press("Tab")
    small.keyboard.type("sent by mail during the outage")
    small.keyboard.press("Tab")
    small.keyboard.press("Enter")
    small.wait_for_selector(f"text=Question {code}'s score saved")
    assert QuizAttempt.objects.get(pk=state["id"]).points == 3.5

    # Regrade one question: drop the self-check, after a dry run.
    small.goto(f"{base}/instructor/quizzes/{quiz.pk}/questions/")
    tab_to(small, "Regrade “First Lesson”…")
    small.keyboard.press("Enter")
    small.wait_for_selector("#regrade-form")
    fits(small)
    tab_to(small, "action-key")  # the first choice of the radio group
    for _ in range(2):  # key -> full credit -> drop (the arrows move the choice)
        small.keyboard.press("ArrowDown")
    assert small.is_checked("#action-drop")
    tab_to(small, "regrade-preview")
    small.keyboard.press("Enter")
    small.wait_for_selector("#regrade-dry-run")
    assert QuizAttempt.objects.get(pk=state["id"]).possible == 4.0  # not yet
    tab_to(small, "regrade-apply")
    small.keyboard.press("Enter")
    small.wait_for_selector("#regrade-count")
    attempt = QuizAttempt.objects.get(pk=state["id"])
    assert (attempt.points, attempt.possible) == (2.5, 3.0)

    # Reopen for leo: a later close and one more attempt, typed in the form.
    small.goto(f"{base}/instructor/quizzes/{quiz.pk}/")
    tab_to(small, "reopen-learner")
    small.keyboard.type("leo")  # picks the option
    tab_to(small, "reopen-closes")
    later = timezone.now() + timedelta(days=2)  # the browser's zone is UTC too
    small.keyboard.type(later.strftime("%m%d%Y"))  # en-US: month, day, year,
    small.keyboard.press("ArrowRight")  # then hour, minute and AM/PM
    small.keyboard.type(later.strftime("%I%M") + later.strftime("%p")[0])
    tab_to(small, "reopen-button")
    small.keyboard.press("Enter")
    small.wait_for_selector("text=Reopened for leo")
    again = api(world.leo).post(f"/api/v1/quizzes/{quiz.pk}/attempts/")
    assert again.status_code == 201, again.json()

    # Every page of the tools fits the other width too: the builder and its
    # picker and the close confirmation on the phone, the review on desktop.
    small.goto(f"{base}/instructor/cohorts/{world.cohort.pk}/quizzes/new/")
    small.wait_for_selector("#slot-builder:not([hidden])")
    small.fill("#pick-q", "parameters")
    small.press("#pick-q", "Enter")
    small.wait_for_selector("#pick-results .bank-result")
    fits(small)
    small.goto(f"{base}/instructor/quizzes/{quiz.pk}/close/")
    fits(small)
    for path in (
        f"/instructor/quiz-attempts/{state['id']}/",
        f"/instructor/quizzes/{quiz.pk}/questions/",
    ):
        page.goto(base + path)
        fits(page)
    assert errors == []
    desktop.close()
    phone.close()

    # Every surface shows lea's one figure: 2.5 of 3 points, 83.3%.
    mine = api(world.lea).get(f"/api/v1/attempts/{state['id']}/").json()
    assert (mine["points"], mine["possible"]) == (2.5, 3.0)
    results = api(world.owner).get(f"/api/v1/quizzes/{quiz.pk}/results/").json()
    (row,) = [r for r in results["learners"] if r["learner"] == "lea"]
    assert row["score"] == pytest.approx(2.5 / 3)
    owner = Client()
    owner.force_login(world.owner)
    book = owner.get(f"/instructor/cohorts/{world.cohort.pk}/gradebook-plain.csv")
    (header, *rows) = list(csv.reader(io.StringIO(book.content.decode())))
    lea_row = dict(zip(header, next(r for r in rows if r[0] == "lea"), strict=True))
    assert lea_row["Week 3 check %"] == "83.3"
