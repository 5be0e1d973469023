"""In Debian's Chromium: the learner-side fixes of the UX round (issue 19).

Each test sets its rows up directly (no grading worker) and drives the real
pages: the editor resumes the last attempt and keeps a draft, feedback hints
progressively, the exercise index, remembered self-check answers, the review
page updating in place, focus and announcements, number formatting, and the
sign-up and progress details. Screenshots land in artifacts/screenshots/.
"""

from __future__ import annotations

import pytest

from grader.models import Submission
from tests.conftest import PROJECT_ROOT, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
EDITOR_BUNDLE = PROJECT_ROOT / "static" / "vendor" / "editor.js"
LAST = "def block_param_count(n_embd):\n    return 'my last attempt'\n"


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def editor_value(page) -> str:
    return page.evaluate("() => window.courseEditor.getValue()")


def test_try_again_opens_the_last_attempt_and_keeps_an_unsent_draft(
    browser, live_server, make_user, block_exercise
):
    if not EDITOR_BUNDLE.exists():
        pytest.fail("static/vendor/editor.js is missing: run `make assets`")
    learner = make_user("resumer")
    Submission.objects.create(
        user=learner, exercise=block_exercise, code=LAST, seed=1, status="failed"
    )
    base = live_server.url
    url = f"{base}/exercises/{block_exercise.slug}/"
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.on("dialog", lambda dialog: dialog.accept())
    sign_in(page, base, "resumer")

    page.goto(url)
    page.wait_for_selector(".cm-editor .cm-content")
    assert editor_value(page) == LAST
    assert page.is_hidden("#draft-status")

    # An unsent edit survives a reload, with a note and a way back.
    page.evaluate("() => window.courseEditor.setValue('draft = 1')")
    page.wait_for_function(
        "() => Object.keys(localStorage).some(k => k.startsWith('course-draft:'))"
    )
    page.reload()
    page.wait_for_selector(".cm-editor .cm-content")
    assert editor_value(page) == "draft = 1"
    assert "Restored your unsent draft" in page.text_content("#draft-status")
    shot(page, "exercise-draft-restored.png")
    page.click("#discard-draft")
    assert editor_value(page) == LAST
    page.reload()
    page.wait_for_selector(".cm-editor .cm-content")
    assert editor_value(page) == LAST

    # Reset to starter is still there.
    page.click("#reset-code")
    assert editor_value(page) == block_exercise.starter

    # A draft typed over an attempt that is no longer the latest is stale.
    page.evaluate("() => window.courseEditor.setValue('stale draft')")
    page.wait_for_function(
        "() => Object.values(localStorage).some(v => v.includes('stale draft'))"
    )
    Submission.objects.create(
        user=learner,
        exercise=block_exercise,
        code="newer = 2",
        seed=2,
        status="failed",
    )
    page.reload()
    page.wait_for_selector(".cm-editor .cm-content")
    assert editor_value(page) == "newer = 2"

    # Without JavaScript the textarea holds the last attempt.
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    sign_in(plain, base, "resumer")
    plain.goto(url)
    assert plain.input_value("textarea#code") == "newer = 2"
    context.close()
