"""In Debian's Chromium: sign up, read a lesson, answer a self-check wrong then
right, reveal and rate a follow-up, and see /progress/ and /review/ follow."""

from __future__ import annotations

import pytest

from quiz.content.loader import content_load
from quiz.models import Lesson
from tests.conftest import PROJECT_ROOT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
PHONE_WIDTH = 375


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    return context.new_page()


@pytest.fixture
def course(content_tree):
    content_tree.lesson(
        "basics",
        1,
        "first-lesson",
        body=(
            "## The answer\n\nThe head reuses the embedding:\n\n"
            "```python\nmodel.lm_head.weight = model.transformer.wte.weight\n```\n\n"
            "| tensor | shape |\n|---|---|\n| wte | (50257, 768) |\n"
        ),
    )
    content_load(root=content_tree.root)
    return Lesson.objects.get(slug="first-lesson")


def stat(page, name: str) -> str:
    return page.text_content(f"#stat-{name}").strip()


def test_a_learner_reads_answers_rates_and_sees_progress(page, live_server, course):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    choice = course.questions.get(order=0)  # options a, b; b is right
    numeric = course.questions.get(order=1)
    follow_up = course.follow_ups.get()
    base = live_server.url

    # Sign up through the form.
    page.goto(base + "/accounts/signup/")
    page.fill("#id_username", "newcomer")
    page.fill("#id_password1", "a-Long-pass-phrase-9")
    page.fill("#id_password2", "a-Long-pass-phrase-9")
    page.click("main button[type=submit]")
    page.wait_for_url(base + "/")
    assert "0 of 2 read" in page.text_content("main")
    page.screenshot(path=str(ARTIFACTS / "home-new-learner.png"), full_page=True)

    # Open the lesson from "Start".
    page.click("a.button:has-text('Start: First Lesson')")
    page.wait_for_url(base + course.get_absolute_url())
    assert page.locator(".lesson-body .highlight").count() == 1
    page.evaluate("window.__samePage = true")  # lost if the page reloads

    # A self-check, wrong then right: feedback appears in place.
    form = f"#q-{choice.pk} form"
    feedback = f"#fb-{choice.pk}"
    page.check(f"{form} input[value='0']")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector(f"{feedback} .verdict.wrong")
    assert "Not quite." in page.text_content(feedback)
    assert "b is right." in page.text_content(feedback)
    page.check(f"{form} input[value='1']")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector(f"{feedback} .verdict.right")
    assert "Right." in page.text_content(feedback)

    # Leave the numeric one wrong so a card is due for review.
    page.fill(f"#a-{numeric.pk}", "12")
    page.click(f"#q-{numeric.pk} form button[type=submit]")
    page.wait_for_selector(f"#fb-{numeric.pk} .verdict.wrong")
    assert page.text_content("#nav-due-count").strip() == "1"

    # A bad answer gets a message, not a crash.
    page.fill(f"#a-{numeric.pk}", "")
    page.click(f"#q-{numeric.pk} form button[type=submit]")
    page.wait_for_selector(f"#fb-{numeric.pk} [role=alert]")
    assert "Enter a number." in page.text_content(f"#fb-{numeric.pk}")

    # Reveal a follow-up with the keyboard, then rate it.
    answer = page.locator(f"#f-{follow_up.pk} .follow-up-answer")
    assert not answer.is_visible()
    page.focus(f"#f-{follow_up.pk} summary")
    page.keyboard.press("Enter")
    assert answer.is_visible()
    page.click(f"#f-{follow_up.pk} button:has-text('Good')")
    page.wait_for_function(
        f"() => document.querySelector('#f-{follow_up.pk} .rate-result')"
        ".textContent.includes('Next review')"
    )
    assert page.evaluate("window.__samePage === true"), "the page reloaded"
    page.screenshot(path=str(ARTIFACTS / "lesson.png"), full_page=True)

    # The same lesson on a phone: nothing but code scrolls sideways.
    page.set_viewport_size({"width": PHONE_WIDTH, "height": 800})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE_WIDTH
    page.screenshot(path=str(ARTIFACTS / "lesson-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1100, "height": 900})

    # Progress moved.
    page.goto(base + "/progress/")
    assert stat(page, "lessons") == "1 of 3"
    assert stat(page, "questions") == "1 of 9"
    assert stat(page, "due") == "1"
    assert stat(page, "streak") == "1 day"
    today = page.locator("#activity-table tbody tr").last
    # 1 lesson opened, 3 answers, 2 reviews (the follow-up, the corrected choice)
    assert today.locator("td").last.text_content() == "6"
    if (PROJECT_ROOT / "static" / "vendor" / "chart.umd.js").exists():
        page.wait_for_selector("#activity-chart[data-drawn=true]")
    page.screenshot(path=str(ARTIFACTS / "progress.png"), full_page=True)

    # The due card is on /review/; rating it empties the queue in place.
    page.goto(base + "/review/")
    assert "How many parameters per block?" in page.text_content("main")
    page.click(".review-card summary")
    assert "7,087,872" in page.text_content(".review-card details")
    page.screenshot(path=str(ARTIFACTS / "review.png"), full_page=True)
    page.click(".review-card button:has-text('Good')")
    # The rated card leaves the page and the result is announced.
    page.wait_for_function(
        "() => !document.querySelector('.review-card')"
        " && document.getElementById('announce').textContent.includes('Next review')"
    )
    assert page.is_visible("#review-empty")
    assert page.text_content("#nav-due-count").strip() == "0"
