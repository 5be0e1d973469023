"""In Debian's Chromium: the learner-side fixes of the UX round (issue 19).

Each test sets its rows up directly (no grading worker) and drives the real
pages: the editor resumes the last attempt and keeps a draft, feedback hints
progressively, the exercise index, remembered self-check answers, the review
page updating in place, focus and announcements, number formatting, and the
sign-up and progress details. Screenshots land in artifacts/screenshots/.
"""

from __future__ import annotations

import pytest

from grader.models import Exercise, Submission
from quiz.content.loader import content_load
from quiz.models import Diagnosis, Lesson, Section
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
    # No reset button without JS: the starter is there to copy instead.
    assert plain.is_hidden("#reset-code")
    plain.click("#starter-plain summary")
    assert "def block_param_count(n_embd):" in plain.text_content("#starter-plain pre")
    context.close()


FIX = "model.lm_head.weight = model.transformer.wte.weight"
COPIED = (
    "you copied wte instead of sharing it: the head has its own "
    f"38,597,376-element tensor. Assign the Parameter itself: {FIX}"
)


def tying_lesson() -> Lesson:
    section = Section.objects.create(slug="head", order=1, title="The head")
    return Lesson.objects.create(
        section=section,
        slug="weight-tying",
        order=1,
        title="Weight tying",
        question="?",
        body="b",
    )


def a_failure(user, exercise) -> Submission:
    return Submission.objects.create(
        user=user,
        exercise=exercise,
        code="x",
        seed=1,
        status="failed",
        score=0.0,
        checks=[
            {
                "name": f"case {n}",
                "passed": False,
                "message": COPIED,
                "expected": "38597376",
                "got": "0",
                "diagnosis": "copied-not-shared",
            }
            for n in range(3)
        ],
    )


def test_feedback_hints_progressively_and_says_a_shared_message_once(
    browser, live_server, make_user, block_exercise
):
    block_exercise.lesson = tying_lesson()
    block_exercise.save()
    Diagnosis.objects.create(
        slug="copied-not-shared",
        summary="Copied wte into the head instead of sharing the same tensor.",
    )
    learner = make_user("hinted")
    first = a_failure(learner, block_exercise)
    base = live_server.url
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    sign_in(page, base, "hinted")

    page.goto(f"{base}/submissions/{first.pk}/")
    checks = page.text_content("#checks")
    assert checks.count("you copied wte instead of sharing it") == 1
    assert "Same message for: case 1, case 2." in checks
    assert FIX not in page.content()
    assert "38,597,376" in page.text_content(".expected-got")
    assert "(3 to go)" in page.text_content(".fix-locked")
    # Where to look: on request.
    lesson_link = page.locator(".mistakes a:has-text('Weight tying')")
    assert not lesson_link.is_visible()
    page.click(".where-to-look summary")
    assert lesson_link.is_visible()
    shot(page, "submission-hint-level-1.png")

    a_failure(learner, block_exercise)
    page.goto(f"{base}/exercises/{block_exercise.slug}/")
    assert page.locator(
        "#latest-result .mistakes a:has-text('Weight tying')"
    ).is_visible()
    assert FIX not in page.content()

    a_failure(learner, block_exercise)
    fourth = a_failure(learner, block_exercise)
    page.goto(f"{base}/submissions/{fourth.pk}/")
    assert page.locator(".fix").count() == 1
    assert FIX in page.text_content(".fix")
    shot(page, "submission-hint-fix.png")


def test_the_exercise_index_lists_sections_with_the_learners_status(
    browser, live_server, make_user, block_exercise
):
    block_exercise.lesson = tying_lesson()
    block_exercise.save()
    Exercise.objects.create(
        slug="unpublished-one",
        title="Not ready",
        harness="block-param-count",
        entry_point="f",
        signature="f()",
        prompt="p",
        starter="s",
        solution="s",
        published=False,
    )
    learner = make_user("indexer")
    Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", seed=1, status="passed"
    )
    base = live_server.url
    page = browser.new_page(viewport={"width": 1100, "height": 900})

    # A visitor: listed, no status.
    page.goto(base + "/")
    page.click("#home-exercises a")
    page.wait_for_url(base + "/exercises/")
    assert page.text_content("main h2").strip() == "1. The head"
    assert page.is_visible("#exercise-block-param-count a")
    assert page.locator(".exercise-status").count() == 0
    assert "Not ready" not in page.text_content("main")

    sign_in(page, base, "indexer")
    page.click("header nav a:has-text('Exercises')")
    page.wait_for_url(base + "/exercises/")
    status = page.text_content("#exercise-block-param-count .exercise-status")
    assert status.strip() == "✓ Passed"
    assert "passed 1 of 1 exercise" in page.text_content("#exercise-summary")
    shot(page, "exercise-index.png")
    page.click("#exercise-block-param-count a")
    page.wait_for_url(f"{base}/exercises/{block_exercise.slug}/")


def test_a_self_check_answer_survives_logging_in_and_reloading(
    browser, live_server, make_user, content_tree
):
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="first-lesson")
    choice = lesson.questions.get(order=0)  # a, b; b is right
    make_user("returner")
    base = live_server.url
    page = browser.new_page(viewport={"width": 1100, "height": 900})

    # A visitor answers, is sent to log in, and comes back to the answer.
    page.goto(base + lesson.get_absolute_url())
    page.check(f"#q-{choice.pk} input[value='1']")
    page.click(f"#q-{choice.pk} form button[type=submit]")
    page.wait_for_url("**/accounts/login/**")
    page.fill("#id_username", "returner")
    page.fill("#id_password", "pw-Secret-123")
    page.click("main button[type=submit]")
    page.wait_for_url(f"**{lesson.get_absolute_url()}**")
    feedback = f"#fb-{choice.pk}"
    assert "Right." in page.text_content(feedback)
    assert "You chose b" in " ".join(page.text_content(feedback).split())
    assert page.is_checked(f"#q-{choice.pk} input[value='1']")

    # A reload keeps it, as does a later wrong answer sent in place.
    page.reload()
    assert page.is_checked(f"#q-{choice.pk} input[value='1']")
    assert "Right." in page.text_content(feedback)
    page.check(f"#q-{choice.pk} input[value='0']")
    page.click(f"#q-{choice.pk} form button[type=submit]")
    page.wait_for_selector(f"{feedback} .verdict.wrong")
    page.reload()
    assert page.is_checked(f"#q-{choice.pk} input[value='0']")
    assert "You chose a" in " ".join(page.text_content(feedback).split())
    shot(page, "lesson-answer-remembered.png")


def test_the_review_page_removes_rated_cards_and_keeps_focus(
    browser, live_server, make_user, content_tree
):
    from quiz.learning import review
    from quiz.models import FollowUp

    content_load(root=content_tree.root)
    learner = make_user("reviewer")
    follow_ups = list(FollowUp.objects.order_by("lesson__section__order", "pk"))
    review.cards_schedule(user=learner, follow_ups=follow_ups, reason="studied")
    assert len(follow_ups) == 3
    base = live_server.url
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    sign_in(page, base, "reviewer")
    page.goto(base + "/review/")
    assert page.text_content("#due-summary-count") == "3 cards due."
    assert page.text_content("#nav-due-count").strip() == "3"
    assert page.is_hidden("#review-empty")

    first, second = page.locator(".review-card").nth(0), page.locator(".review-card")
    first_id = first.get_attribute("id")
    second_id = second.nth(1).get_attribute("id")
    first.locator("summary").click()
    first.locator("button:has-text('Good')").focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => !document.getElementById('{first_id}')"
        " && document.getElementById('announce').textContent.includes('Next review')"
    )
    assert page.text_content("#due-summary-count") == "2 cards due."
    assert page.text_content("#nav-due-count").strip() == "2"
    assert "2 cards due" in page.text_content("#announce")
    # Focus went to the next card, not to <body>.
    assert page.evaluate(
        f"() => document.getElementById('{second_id}').contains(document.activeElement)"
    )
    shot(page, "review-after-rating.png")

    for left in (1, 0):  # counted before the click: the card may go at once
        card = page.locator(".review-card").first
        card.locator("summary").click()
        card.locator("button:has-text('Easy')").click()
        page.wait_for_function(
            "(n) => document.querySelectorAll('.review-card').length === n",
            arg=left,
        )
    assert page.is_visible("#review-empty")
    assert page.evaluate("() => document.activeElement.id") == "review-empty"
    assert page.text_content("#nav-due-count").strip() == "0"

    # Without JavaScript the rating is a plain form post that still works.
    review.cards_schedule(user=learner, follow_ups=follow_ups[:1], reason="studied")
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    sign_in(plain, base, "reviewer")
    plain.goto(base + "/review/")
    plain.click(".review-card summary")
    plain.click(".review-card button:has-text('Good')")
    plain.wait_for_url(base + "/review/")
    assert "Next review of this card" in plain.text_content("main")
    assert plain.locator(".review-card").count() == 0
    context.close()


def test_check_answer_keeps_focus_and_announces_the_result(
    browser, live_server, make_user, content_tree
):
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="first-lesson")
    choice = lesson.questions.get(order=0)
    numeric = lesson.questions.get(order=1)
    follow_up = lesson.follow_ups.get()
    make_user("focused")
    base = live_server.url
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    sign_in(page, base, "focused")
    page.goto(base + lesson.get_absolute_url())

    page.check(f"#q-{choice.pk} input[value='1']")
    button = f"#q-{choice.pk} form button[type=submit]"
    page.focus(button)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#fb-{choice.pk} .verdict.right")
    page.wait_for_function(
        "() => document.getElementById('announce').textContent.includes('Right.')"
    )
    assert page.evaluate("() => document.activeElement.tagName") == "BUTTON"
    assert page.evaluate(
        f"() => document.querySelector('#q-{choice.pk}')"
        ".contains(document.activeElement)"
    )
    assert page.get_attribute(button, "aria-disabled") is None  # usable again

    # The numeric answer and its tolerance read as the lessons write them.
    numeric.numeric_answer, numeric.tolerance = 154.4, 0.1
    numeric.save()
    page.fill(f"#a-{numeric.pk}", "154.45")
    page.click(f"#q-{numeric.pk} form button[type=submit]")
    page.wait_for_selector(f"#fb-{numeric.pk} .verdict.right")
    text = " ".join(page.text_content(f"#fb-{numeric.pk}").split())
    assert "The answer is 154.4 ± 0.1." in text and "154.400000" not in text

    # A rating button keeps focus and announces the next review too.
    page.click(f"#f-{follow_up.pk} summary")
    page.focus(f"#f-{follow_up.pk} button:has-text('Good')")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.getElementById('announce').textContent.includes('Next review')"
    )
    assert page.evaluate("() => document.activeElement.textContent") == "Good"
    shot(page, "lesson-focus-kept.png")


def test_sign_up_returns_to_the_page_and_progress_says_of_how_many(
    browser, live_server, block_exercise
):
    base = live_server.url
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(base + "/exercises/")
    page.click("header a:has-text('Sign up')")
    page.wait_for_url("**/accounts/signup/**")
    # The buttons are styled like the site's other buttons, not the UA's.
    submit = "main button[type=submit]"
    styled = page.evaluate(
        "(sel) => { const s = getComputedStyle(document.querySelector(sel));"
        " return [s.backgroundColor, s.color, s.borderRadius]; }",
        submit,
    )
    assert styled == ["rgb(11, 92, 173)", "rgb(255, 255, 255)", "6px"], styled
    shot(page, "signup.png")
    page.fill("#id_username", "arriving")
    page.fill("#id_password1", "a-Long-pass-phrase-9")
    page.fill("#id_password2", "a-Long-pass-phrase-9")
    page.click(submit)
    page.wait_for_url(base + "/exercises/")

    page.goto(base + "/progress/")
    assert page.text_content("#stat-exercises").strip() == "0 of 1"
    Submission.objects.create(
        user=page_user("arriving"),
        exercise=block_exercise,
        code="x",
        seed=1,
        status="passed",
    )
    page.reload()
    assert page.text_content("#stat-exercises").strip() == "1 of 1"

    # Log-in is styled the same, and its sign-up link keeps `next`.
    page.click("header button:has-text('Log out')")
    page.goto(base + "/accounts/login/?next=/exercises/")
    assert (
        page.evaluate(
            "(sel) => getComputedStyle(document.querySelector(sel)).backgroundColor",
            submit,
        )
        == "rgb(11, 92, 173)"
    )
    assert page.get_attribute("main a:has-text('Sign up')", "href") == (
        "/accounts/signup/?next=/exercises/"
    )


def page_user(username: str):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)
