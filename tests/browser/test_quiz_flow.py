"""In Debian's Chromium: learners take a timed quiz with JavaScript on, by
keyboard only, on a desktop and on a 390 px phone.

One journey (a browser and a server are expensive, so one of each): lea on
a 1280 px desktop starts the quiz from the home page, picks an option with
the arrow keys, types two numbers (one malformed first) and code in the
CodeMirror editor (Tab indents; Escape, then Tab leaves it), each saved on
its own; she jumps between questions with the bar's question buttons and
flags one, and every focused field and #question-n jump lands below the
sticky bar (Shift+Tab upwards too). With the server unreachable (a route
that aborts) the bar and the question say "Not saved" where she looks. A
reload shows the same answers, flags and clock. leo, on a 390 px phone in
the dark theme, where the bar stays small, writes code, flags a question,
opens the summary and submits, and axe-core audits the attempt, the summary
and the result there. Before that lea goes from her summary back to the
flagged question, and submits; her code is still being graded, and her
result page updates itself once the verdict arrives, with the mistake it
names. Meanwhile an instructor's preview runs out of time and its countdown
submits it. No page reports a CSP violation.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from grader.models import Submission
from teaching.models import Quiz, QuizAttempt
from teaching.quizzes.scoring import code_verdicts
from teaching.quizzes.services import attempt_start
from tests.browser.test_accessibility import AXE, MODES, log_in_by_cookie, page_problems
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import create, quiz_body, right_answers

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

PHONE_DARK = MODES["phone-dark"]
DESKTOP = {"viewport": {"width": 1280, "height": 900}}
CODE = "def f():\n    return 1"
# A question's answer as the page last saved it (static/js/quiz_attempt.js).
SAVED = """([n, value]) =>
    document.querySelector(`fieldset[data-question='${n}']`).dataset.saved === value"""
# Where the focused element (or `selector`) is, against the sticky bar.
PLACE = """(selector) => {
    const node = selector ? document.querySelector(selector) : document.activeElement;
    const box = node.getBoundingClientRect();
    const bar = document.getElementById('quiz-timer').getBoundingClientRect();
    return {what: node.id || node.className, top: box.top, bar: bar.bottom,
            barHeight: bar.height, screen: innerHeight};
}"""
IN_EDITOR = "() => Boolean(document.activeElement.closest('.cm-editor'))"
EDITOR_TEXT = "(n) => document.getElementById(`a-${n}`).value"


def audit(page, name: str) -> list[str]:
    """axe and the layout checks on the page as it is now (phone, dark)."""
    return page_problems(page, name, f"{name}-phone-dark")


def clear_of_bar(page, selector: str | None = None) -> dict:
    """The focused element (or `selector`) is on screen and not under the bar."""
    place = page.evaluate(PLACE, selector)
    assert place["bar"] <= place["top"] + 0.5 < place["screen"], place
    return place


def keys(page, *presses: str) -> None:
    for press in presses:
        page.keyboard.press(press)


def answer_by_keyboard(page, right: dict) -> None:
    """Questions 1-4 by keyboard: an option, two numbers, code."""
    # An option: Tab into the group lands on the first; arrows move and pick.
    page.focus("#question-2 input[type=radio]")  # stands for Tab presses
    keys(page, *["ArrowDown"] * right["2"] if right["2"] else ["Space"])
    page.wait_for_function(SAVED, arg=["2", str(right["2"])])
    page.evaluate("window.stayed = true")  # gone if a key reloads the page
    page.focus("#a-1")
    page.keyboard.type("12x")
    keys(page, "Enter")  # saves at once (typing alone: 800 ms after the last key)
    page.wait_for_selector("#err-1:has-text('Question 1 (slot 1)')")
    assert page.get_attribute("#a-1", "aria-invalid") == "true"
    keys(page, "Control+A")
    page.keyboard.type(f"{int(right['1']):,}")
    keys(page, "Enter")
    # Tab: question 2's flag, its options (one stop), question 3's flag, answer
    keys(page, "Tab", "Tab", "Tab", "Tab")
    assert page.evaluate("document.activeElement.id") == "a-3"
    page.keyboard.type(f"{int(right['3']):,}")
    page.wait_for_function(SAVED, arg=["1", f"{int(right['1']):,}"])
    page.wait_for_function(SAVED, arg=["3", f"{int(right['3']):,}"])
    assert page.text_content("#err-1") == ""
    assert page.evaluate("window.stayed")  # Enter saved in place, no post


def code_by_keyboard(page) -> None:
    """Question 4's code, through the bar's button for it: the jump lands below
    the bar; Tab: the flag, the editor's scroll area, the editor."""
    page.focus("#nav-4")
    keys(page, "Enter")
    page.wait_for_url("**#question-4")
    clear_of_bar(page, "#question-4")
    keys(page, "Tab")
    assert page.evaluate("document.activeElement.id") == "flag-4"
    clear_of_bar(page)
    keys(page, "Tab", "Tab")
    assert page.evaluate(IN_EDITOR)
    keys(page, "Control+A")
    page.keyboard.type("def f():")
    keys(page, "Enter")  # the editor indents the body by itself
    page.keyboard.type("return 1")
    keys(page, "Tab")  # Tab indents the line, and stays in the editor
    assert page.evaluate(EDITOR_TEXT, "4") == "def f():\n        return 1"
    assert page.evaluate(IN_EDITOR)
    keys(page, "Shift+Tab")
    assert page.evaluate(EDITOR_TEXT, "4") == CODE
    keys(page, "Escape", "Tab")  # leaves the editor
    assert not page.evaluate(IN_EDITOR)
    page.wait_for_function(SAVED, arg=["4", CODE])
    assert page.is_visible("#keys-4")  # the page says how to leave it

    # Shift+Tab up from question 4's flag to question 3's answer, which is
    # above the screen: it scrolls into view below the bar, not under it.
    page.focus("#nav-4")
    keys(page, "Enter", "Tab", "Shift+Tab")
    assert page.evaluate("document.activeElement.id") == "a-3"
    clear_of_bar(page)


def flag_by_keyboard(page, number: int, flags: list[int], attempt_id: int) -> None:
    page.focus(f"#nav-{number}")  # the bar's button, reached with Tab
    keys(page, "Enter", "Tab")
    assert page.evaluate("document.activeElement.id") == f"flag-{number}"
    clear_of_bar(page)
    keys(page, "Space")
    page.wait_for_selector(f"#nav-{number}.is-flagged")
    page.wait_for_selector("#save-status:has-text('Flags saved')")
    assert page.text_content(f"#status-{number}") == "Flagged for review"
    assert QuizAttempt.objects.get(pk=attempt_id).flags == flags


def review_and_submit(
    page, attempt_url: str, flagged: int, answered: str, *, back: bool
) -> None:
    """The summary (from the bar), back to the flagged question, submit."""
    page.focus("#review-bar")
    keys(page, "Enter")
    page.wait_for_url(attempt_url + "summary/")
    counts = page.text_content("#review-counts")
    assert f"{answered} questions answered" in counts and "1 flagged" in counts
    assert page.text_content(f"#summary-{flagged}").count("flagged for review") == 1
    if back:
        page.focus(f"#review-flagged a[href$='#question-{flagged}']")
        keys(page, "Enter")
        page.wait_for_url(f"{attempt_url}#question-{flagged}")
        page.wait_for_selector(f"#nav-{flagged}")
        clear_of_bar(page, f"#question-{flagged}")
        assert page.is_checked(f"#flag-{flagged}")
        page.focus("#review-attempt")  # the Submit at the end of the page
        keys(page, "Enter")
        page.wait_for_url(attempt_url + "summary/")
    page.focus("#submit-attempt")
    keys(page, "Enter")
    page.wait_for_selector("#result")
    assert "Your attempt was submitted." in page.text_content("main")


def verdict(user, checks: list[dict]) -> None:
    """The grader's verdict on the user's quiz code, as a worker writes it,
    then the score listener as the worker calls it."""
    Submission.objects.filter(user=user).update(
        status="failed",
        score=0.0,
        checks=checks,
        finished_at=timezone.now(),
    )
    code_verdicts([user.pk])


def test_learners_take_a_timed_quiz_by_keyboard(
    browser, live_server, world, quiz_course
):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run scripts/build_assets.sh (npm ci)")
    slots = quiz_body()["slots"] + [{"points": 1, "pool": {"exercises": ["ex-a"]}}]
    # 1 the template (numeric), 2 choice, 3 numeric, 4 code
    quiz = create(world, shuffle=False, slots=slots)
    base = live_server.url
    complaints: list[str] = []

    def watch(page):
        page.on(
            "console",
            lambda m: complaints.append(m.text)
            if "Content Security Policy" in m.text or "Refused to" in m.text
            else None,
        )
        page.on("pageerror", lambda error: complaints.append(str(error)))
        return page

    # The countdown, meanwhile: an instructor's preview that runs out while
    # the learners work; at 0 its page submits the form.
    teacher = browser.new_context(**DESKTOP)
    log_in_by_cookie(teacher, base, world.owner)
    quiz_row = Quiz.objects.get(pk=quiz["id"])
    preview, _ = attempt_start(quiz=quiz_row, learner=world.owner, preview=True)
    QuizAttempt.objects.filter(pk=preview.pk).update(
        deadline=timezone.now() + timedelta(seconds=8)
    )
    watch(teacher.new_page()).goto(f"{base}/quizzes/attempts/{preview.pk}/")

    context = browser.new_context(**DESKTOP)
    log_in_by_cookie(context, base, world.lea)
    page = watch(context.new_page())
    page.goto(base + "/")
    page.focus(f"#home-quiz-{quiz['id']} a")
    keys(page, "Enter")
    page.wait_for_url(f"{base}/quizzes/{quiz['id']}/")
    page.focus("#start")
    keys(page, "Enter")
    page.wait_for_selector("#question-4 .cm-editor")
    attempt_url = page.url
    attempt_id = int(attempt_url.rstrip("/").rsplit("/", 1)[1])
    right = right_answers(attempt_id)
    assert len(page.locator(".prompt").all_text_contents()) == 4

    answer_by_keyboard(page, right)
    code_by_keyboard(page)
    flag_by_keyboard(page, 2, [2], attempt_id)
    assert all(
        "is-answered" in page.get_attribute(f"#nav-{n}", "class") for n in range(1, 5)
    )

    # The server unreachable: said in the bar, in view, and at the question.
    page.route("**/api/v1/attempts/**", lambda route: route.abort())
    page.focus("#a-3")
    keys(page, "End", "5", "Enter")
    page.wait_for_selector("#save-status.is-bad:has-text('could not be reached')")
    clear_of_bar(page)
    status = page.evaluate(PLACE, "#save-status")
    assert 0 <= status["top"] < status["bar"], status  # inside the sticky bar
    assert "could not be reached" in page.text_content("#status-3")
    page.unroute("**/api/v1/attempts/**")
    keys(page, "Backspace", "Enter")  # back to the saved answer
    page.wait_for_selector("#save-status:not(.is-bad):has-text('saved')")
    assert page.text_content("#status-3") == ""

    # The database restarting: 503 with Retry-After. The page says so and
    # saves by itself once the server is back, with no key pressed.
    refused = []

    def busy_once(route):
        if refused:
            route.continue_()
            return
        refused.append(route.request.url)
        route.fulfill(
            status=503,
            headers={"Retry-After": "1"},
            content_type="application/json",
            body='{"detail": "The database is unavailable."}',
        )

    page.route("**/api/v1/attempts/**", busy_once)
    typed = page.input_value("#a-3")
    keys(page, "Control+a", "7", "Enter")  # a wrong answer, for a moment
    page.wait_for_selector("#save-status.is-bad:has-text('Trying again')")
    page.wait_for_selector("#save-status:not(.is-bad):has-text('saved')")
    assert len(refused) == 1 and "busy" not in page.text_content("#status-3")
    page.unroute("**/api/v1/attempts/**")
    with page.expect_response(
        lambda r: "/api/v1/attempts/" in r.url and r.request.method == "PATCH" and r.ok
    ):
        page.fill("#a-3", typed)  # the right answer again
        keys(page, "Enter")

    # A reload (or another device) shows the same answers, flags and clock.
    page.reload()
    page.wait_for_selector("#question-4 .cm-editor")
    assert page.is_checked(f"input[name=q-2][value='{right['2']}']")
    assert page.input_value("#a-1") == f"{int(right['1']):,}"
    assert page.evaluate(EDITOR_TEXT, "4") == CODE
    assert page.is_checked("#flag-2") and not page.is_checked("#flag-1")
    shown = page.text_content("#time-left")
    assert shown.startswith(("29 min", "30 min")), shown

    # lea goes from her summary back to the flagged question, then submits;
    # her code waits for the grader (its verdict comes below).
    review_and_submit(page, attempt_url, 2, "4 of 4", back=True)
    assert "Some code is still being graded" in page.text_content("#result")
    assert "updates itself" in page.text_content("#grading-status")
    assert page.locator(".verdict.right").count() == 3
    verdict(
        world.lea,
        [
            {"name": "returns", "passed": True, "message": ""},
            {
                "name": "counts the head once",
                "passed": False,
                "message": "The tied head was counted twice.",
                "diagnosis": "tied-head-counted-twice",
            },
        ],
    )

    # leo, on a phone in the dark theme: an answer typed before the page's
    # script ran, code, a flag, the question buttons, the summary, submit;
    # axe on each page.
    phone = browser.new_context(bypass_csp=True, **PHONE_DARK)
    problems: list[str] = []
    try:
        log_in_by_cookie(phone, base, world.leo)
        small = phone.new_page()
        small.goto(f"{base}/quizzes/{quiz['id']}/")
        # A slow page: leo types an answer before the attempt's script has
        # run (held back here); it is saved once the script runs.
        held = []
        small.route("**/quiz_attempt*.js", lambda route: held.append(route))
        small.focus("#start")
        with small.expect_request("**/quiz_attempt*.js"):
            keys(small, "Enter")
        small.fill("#a-1", "12")
        first = "fieldset[data-question='1']"
        assert held and small.get_attribute(first, "data-saved") == ""
        held[0].continue_()
        small.unroute("**/quiz_attempt*.js")
        small.wait_for_function(SAVED, arg=["1", "12"])
        small.wait_for_selector("#question-4 .cm-editor")
        leo_url = small.url
        leo_id = int(leo_url.rstrip("/").rsplit("/", 1)[1])
        bar = small.evaluate(PLACE, "#quiz-timer")
        assert bar["barHeight"] < 0.2 * bar["screen"], bar  # not the screen
        code_by_keyboard(small)
        flag_by_keyboard(small, 3, [3], leo_id)
        problems += audit(small, "quiz-attempt")
        small.focus("#review-bar")
        keys(small, "Enter")
        small.wait_for_url(leo_url + "summary/")
        problems += audit(small, "quiz-summary")
        small.goto(leo_url)
        review_and_submit(small, leo_url, 3, "2 of 4", back=False)
        assert small.is_visible("#score-grading")
        problems += audit(small, "quiz-result")
    finally:
        phone.close()
    assert problems == [], "\n".join(problems)

    # Meanwhile lea's page asked the server, and shows the verdict by itself,
    # with the mistake it names.
    page.wait_for_selector("#fb-4:has-text('Not passed')", timeout=15_000)
    assert not page.is_visible("#score-grading")
    mistake = page.text_content("#mistake-4")
    assert "The tied head was counted twice." in mistake
    assert "Why: Counted the tied head as a second matrix." in mistake
    assert page.get_attribute("#mistake-4 a", "href") == "/lessons/first-lesson/"
    assert "4 of 5 points" in page.text_content("#score")

    # And the preview's countdown submitted it at 0.
    (ended,) = teacher.pages
    ended.wait_for_selector("#result", timeout=15_000)
    assert "Time is up" in ended.text_content("main")
    assert QuizAttempt.objects.get(pk=preview.pk).submitted_by == "deadline"
    assert complaints == []
    teacher.close()
    context.close()
