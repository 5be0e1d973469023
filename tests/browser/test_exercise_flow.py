"""In Debian's Chromium, as a new learner: the tie-weights exercise end to end.

Type a wrong answer into the real editor, submit with Ctrl+Enter, watch the
failed verdict and its diagnosis arrive without a reload (a real Celery
worker grades it), then the right answer: passed, the solution unlocked, two
rows of history and the progress page moving. Screenshots land in
artifacts/screenshots/.
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Error as PlaywrightError

from grader.failure_review import CARDS_PER_FAILURE
from grader.models import Exercise
from quiz.content.diagnoses import diagnosis_load
from quiz.content.loader import content_load
from quiz.models import FollowUp, ReviewCard
from tests.conftest import PROJECT_ROOT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # one warm worker (tests/conftest.py)
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
EDITOR_BUNDLE = PROJECT_ROOT / "static" / "vendor" / "editor.js"
WRONG = (
    "import torch\n\n"
    "def tie_weights(model):\n"
    "    copy = model.transformer.wte.weight.detach().clone()\n"
    "    model.lm_head.weight = torch.nn.Parameter(copy)"
)
RIGHT = (
    "def tie_weights(model):\n    model.lm_head.weight = model.transformer.wte.weight\n"
)
SOLUTION_MARK = "both modules now hold the same"  # from the reference solution
TERMINAL = (  # a function: the page's CSP refuses eval of a bare expression
    "() => ['passed', 'failed', 'error']"
    ".includes(document.getElementById('status').textContent)"
)


@pytest.fixture
def browser(browser):
    if not EDITOR_BUNDLE.exists():
        pytest.fail("static/vendor/editor.js is missing: run `make assets`")
    return browser


@pytest.fixture
def worker_stack(warm):
    content_load(root=PROJECT_ROOT / "content")
    diagnosis_load(path=PROJECT_ROOT / "content" / "diagnoses.yaml")
    warm.ready(slots=2)
    return warm


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def type_into_editor(page, code: str) -> None:
    """Type like a person: CodeMirror indents after ':' and keeps the indent."""
    page.click(".cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    for n, line in enumerate(code.split("\n")):
        if n:
            page.keyboard.press("Escape")  # close any completion popup first
            page.keyboard.press("Enter")
        if line.strip():
            page.keyboard.type(line.strip())
    typed = page.evaluate("window.courseEditor.getValue()")
    if typed.rstrip() != code.rstrip():  # auto-indent disagreed: set it exactly
        page.evaluate("code => window.courseEditor.setValue(code)", code)
    assert page.evaluate("window.courseEditor.getValue()").rstrip() == code.rstrip()
    # The form posts the textarea: it must hold what the editor shows.
    assert page.input_value("#code").rstrip() == code.rstrip()


def wait_for_verdict(page) -> str:
    page.wait_for_url("**/submissions/**")
    page.evaluate("window.__samePage = true")  # lost if the page reloads
    page.wait_for_function(TERMINAL, timeout=180_000)
    assert page.evaluate("window.__samePage === true"), "the page reloaded"
    return page.text_content("#status")


def exercises_passed(page, base: str) -> str:
    page.goto(base + "/progress/")
    return page.text_content("#stat-exercises").strip()


def test_a_learner_fails_then_passes_tie_weights_in_the_real_editor(
    browser, worker_stack, live_server
):
    base = live_server.url
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.on("dialog", lambda dialog: dialog.accept())

    page.goto(base + "/accounts/signup/")
    page.fill("#id_username", "tess")
    page.fill("#id_password1", "pw-Secret-123-x")
    page.fill("#id_password2", "pw-Secret-123-x")
    page.click("main button[type=submit]")
    page.wait_for_url(base + "/")
    published = Exercise.objects.filter(published=True).count()
    assert exercises_passed(page, base) == f"0 of {published}"

    page.goto(base + "/exercises/tie-weights/")
    page.wait_for_selector(".cm-editor .cm-content")
    # The editor replaced the textarea, which stays in the form, out of sight.
    assert "visually-hidden" in page.get_attribute("#code", "class")
    assert page.get_attribute("#code", "aria-hidden") == "true"
    assert "tie_weights" in page.evaluate("window.courseEditor.getValue()")
    assert page.locator("#solution pre").count() == 0
    assert SOLUTION_MARK not in page.content()
    label = page.get_attribute(".cm-content", "aria-label")
    assert label.startswith("Your code") and "Escape then Tab" in label

    # Keyboard users are never trapped: Escape, then Tab leaves the editor.
    page.click(".cm-content")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Submit for grading"

    # Reset restores the starter after a confirm.
    starter = page.evaluate("window.courseEditor.getValue()")
    page.evaluate("window.courseEditor.setValue('x = 1')")
    page.click("#reset-code")
    assert page.evaluate("window.courseEditor.getValue()") == starter

    type_into_editor(page, WRONG)
    assert page.locator(".cm-line span[class]").count() > 0  # highlighted
    shot(page, "exercise-editor.png")
    page.keyboard.press("Control+Enter")  # the shortcut submits
    assert wait_for_verdict(page) == "failed"
    assert "copied wte instead of sharing it" in page.text_content("#checks")
    mistakes = " ".join(page.text_content("#results .mistakes").split())
    assert "Copied wte into the head instead of sharing the same tensor" in mistakes
    # Progressive hints: the lessons on request, the fix not yet (1 failure).
    where = page.locator("#results .mistakes a:has-text('Weight tying')")
    assert not where.is_visible()
    page.click("#results .where-to-look summary")
    assert where.is_visible()
    assert "model.lm_head.weight = model.transformer" not in page.content()
    shot(page, "submission-failed.png")

    # The failure put the tying lesson's first follow-ups in the review queue,
    # at most CARDS_PER_FAILURE of them (one failure must not flood it).
    tying = set(
        FollowUp.objects.filter(lesson__slug="weight-tying-124m")
        .order_by("order", "pk")
        .values_list("pk", flat=True)[:CARDS_PER_FAILURE]
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        carded = set(
            ReviewCard.objects.filter(
                user__username="tess", reason="exercise"
            ).values_list("follow_up", flat=True)
        )
        if tying and tying <= carded:
            break
        time.sleep(0.2)
    assert tying and tying <= carded
    assert len(carded) == CARDS_PER_FAILURE

    page.goto(base + "/exercises/tie-weights/")
    page.wait_for_selector(".cm-editor .cm-content")
    assert page.locator("#attempts tbody tr").count() == 1
    assert page.is_visible("#solution-locked")
    assert page.locator("#solution pre").count() == 0
    assert SOLUTION_MARK not in page.content()
    page.evaluate("code => window.courseEditor.setValue(code)", RIGHT)
    page.click(".code-form button[type=submit]")
    assert wait_for_verdict(page) == "passed"
    assert "FAIL" not in page.text_content("#checks")
    shot(page, "submission-passed.png")

    page.goto(base + "/exercises/tie-weights/")
    assert page.locator("#attempts tbody tr").count() == 2
    statuses = page.locator("#attempts tbody tr td:nth-child(2)").all_text_contents()
    assert [s.strip() for s in statuses] == ["passed", "failed"]
    assert "because you passed" in page.text_content("#solution-note")
    assert SOLUTION_MARK in page.text_content("#solution pre")
    assert page.is_visible("#passed-badge")
    assert exercises_passed(page, base) == f"1 of {published}"

    # A phone: the page fits 375 px without sideways scrolling.
    phone = browser.new_page(viewport={"width": 375, "height": 812})
    phone.context.add_cookies(page.context.cookies())
    phone.goto(base + "/exercises/tie-weights/")
    phone.wait_for_selector(".cm-editor .cm-content")
    too_wide = phone.evaluate(
        "[...document.querySelectorAll('body *')]"
        ".filter(e => e.getBoundingClientRect().right > 376)"
        ".map(e => e.tagName + '.' + e.className + '#' + e.id)"
    )
    assert phone.evaluate("document.documentElement.scrollWidth") <= 375, too_wide
    shot(phone, "exercise-phone.png")


def test_without_javascript_the_page_reads_and_submits_as_a_plain_form(
    browser, worker_stack, live_server, make_user
):
    make_user("nojs")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "nojs")
    page.fill("#id_password", "pw-Secret-123")
    page.click("main button[type=submit]")
    page.goto(live_server.url + "/exercises/tie-weights/")
    assert page.is_visible("textarea#code")
    assert page.is_hidden("#reset-code")  # needs JS, so it stays hidden
    assert "tie_weights(model)" in page.text_content("main")
    page.fill("#code", RIGHT)
    page.click(".code-form button[type=submit]")
    page.wait_for_url("**/submissions/**")
    # The <noscript> refresh reloads the page until the verdict is in.
    deadline = time.monotonic() + 180
    status = ""
    while time.monotonic() < deadline and status not in ("passed", "failed", "error"):
        time.sleep(0.5)
        try:
            status = page.text_content("#status", timeout=5_000) or ""
        except PlaywrightError:  # caught mid-refresh
            status = ""
    assert status == "passed"
    assert "PASS" in page.text_content("#checks")
    context.close()
