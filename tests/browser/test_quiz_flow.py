"""In Debian's Chromium: a learner takes a timed quiz with JavaScript on.

One journey (a browser is expensive): sign in, find the quiz on the home
page, start, answer a choice and two numeric questions (one malformed
first) and see each saved on its own, reload and find the same questions,
the saved answers and a running countdown, submit and see the score; then
a second attempt runs out of time and the countdown submits it. Along
the way axe-core audits the intro, the attempt in progress and the result
on a 390 px phone in dark mode, and no page reports a CSP violation.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from quiz.models import QuizAttempt
from tests.browser.test_accessibility import AXE, MODES, _log_in, page_problems
from tests.conftest import sign_in
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import create, right_answers

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

PHONE_DARK = MODES["phone-dark"]
# A question's answer as the page last saved it (static/js/quiz_attempt.js).
SAVED = """([n, value]) =>
    document.querySelector(`fieldset[data-question='${n}']`).dataset.saved === value"""


def audit(page, name: str) -> list[str]:
    """axe and the layout checks on the page as it is now (phone, dark)."""
    return page_problems(page, name, f"{name}-phone-dark")


def test_a_learner_takes_a_timed_quiz_with_autosave(
    browser, live_server, world, quiz_course
):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run scripts/build_assets.sh (npm ci)")
    quiz = create(world, shuffle=False)  # 1 template (numeric), 2 choice, 3 numeric
    base = live_server.url
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    complaints: list[str] = []
    page.on(
        "console",
        lambda m: complaints.append(m.text)
        if "Content Security Policy" in m.text or "Refused to" in m.text
        else None,
    )
    page.on("pageerror", lambda error: complaints.append(str(error)))

    sign_in(page, base, "lea")
    page.click(f"#home-quiz-{quiz['id']} a")
    page.wait_for_url(f"{base}/quizzes/{quiz['id']}/")
    page.click("#start")
    page.wait_for_url(f"{base}/quizzes/attempts/*/")
    attempt_url = page.url
    attempt_id = int(attempt_url.rstrip("/").rsplit("/", 1)[1])
    right = right_answers(attempt_id)
    prompts = page.locator(".prompt").all_text_contents()
    assert len(prompts) == 3

    # A choice saves as soon as it is picked; a number 800 ms after typing.
    page.check(f"input[name=q-2][value='{right['2']}']")
    page.wait_for_function(SAVED, arg=["2", str(right["2"])])
    page.wait_for_selector("#save-status:has-text('Saved')")
    page.fill("#a-1", "12x")
    page.wait_for_selector("#err-1:has-text('Question 1 (slot 1)')")
    assert page.get_attribute("#a-1", "aria-invalid") == "true"
    page.fill("#a-1", f"{int(right['1']):,}")
    page.fill("#a-3", f"{int(right['3']):,}")
    page.wait_for_function(SAVED, arg=["1", f"{int(right['1']):,}"])
    page.wait_for_function(SAVED, arg=["3", f"{int(right['3']):,}"])
    assert page.text_content("#err-1") == ""
    page.wait_for_selector("#save-status:has-text('Saved ')")

    # A reload (or another device) shows the same attempt, answers and clock.
    page.reload()
    assert page.locator(".prompt").all_text_contents() == prompts
    assert page.is_checked(f"input[name=q-2][value='{right['2']}']")
    assert page.input_value("#a-1") == f"{int(right['1']):,}"
    assert page.input_value("#a-3") == f"{int(right['3']):,}"
    shown = page.text_content("#time-left")
    assert shown.startswith(("29 min", "30 min")), shown
    page.wait_for_function(
        "(t) => document.getElementById('time-left').textContent !== t", arg=shown
    )

    # axe on a phone in dark mode: the intro and the attempt in progress.
    phone = browser.new_context(bypass_csp=True, **PHONE_DARK)
    problems = []
    try:
        _log_in(phone, base, world.lea)
        audited = phone.new_page()
        audited.goto(f"{base}/quizzes/{quiz['id']}/")
        problems += audit(audited, "quiz-intro")
        audited.goto(attempt_url)
        audited.wait_for_selector("#time-left")
        problems += audit(audited, "quiz-attempt")

        # Submit (in the first window) and see the score and the feedback.
        page.click("#submit-attempt")
        page.wait_for_selector("#score")
        assert "4 of 4 points" in page.text_content("#score")
        assert page.locator(".verdict.right").count() == 3
        assert "Your attempt was submitted." in page.text_content("main")

        audited.goto(attempt_url)
        audited.wait_for_selector("#score")
        problems += audit(audited, "quiz-result")
    finally:
        phone.close()
    assert problems == [], "\n".join(problems)

    # The second attempt runs out: at 0 the countdown submits the form.
    page.goto(f"{base}/quizzes/{quiz['id']}/")
    page.click("#start")
    page.wait_for_selector("#time-left")
    second = QuizAttempt.objects.get(quiz_id=quiz["id"], learner=world.lea, number=2)
    QuizAttempt.objects.filter(pk=second.pk).update(
        deadline=timezone.now() + timedelta(seconds=2)
    )
    page.reload()
    page.wait_for_selector("#result", timeout=15_000)
    assert "Time is up" in page.text_content("main")
    assert QuizAttempt.objects.get(pk=second.pk).submitted_by == "deadline"
    assert complaints == []
    context.close()
