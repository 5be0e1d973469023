"""In Debian's Chromium: every form's dates stay put in the instructor's zone.

One browser, one context per zone (Asia/Kolkata, +05:30, east of UTC;
America/Los_Angeles, west, on the other side of a DST change from the stored
summer date): static/js/localtime.js really moves the values and posts the
zone. In each, the quiz edit form saved unchanged keeps its dates to the
second, a typed time is stored as that zone's time (west of UTC, after a
refused save, a 400, that gives it back as typed, in its zone); the
assignment edit form saved unchanged keeps its dates; an extension and an
accommodation typed in the zone are stored as its time. The rules for each
form, the DST edges and the refusals are in tests/quiz/test_form_time_zones.py.
"""

from __future__ import annotations

import pytest

from teaching.models import Assignment, Quiz, QuizAccommodation
from tests.browser.test_accessibility import log_in_by_cookie
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.test_form_time_zones import (
    CLOSES,
    EAST,
    OPENS,
    WEST,
    shown_in,
    stored_assignment,
    stored_quiz,
    zoned,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]
ALIASES = {EAST: ("Asia/Calcutta",)}


# localtime.js is deferred: it has run when the DOM is ready. Styles are
# left out (nothing here looks at them): each page is six requests fewer.
READY = "domcontentloaded"


def submit(page, form: str) -> None:
    """Press the form's button and wait for the page that answers."""
    with page.expect_navigation(wait_until=READY):
        page.click(f"{form} button[type=submit]")


def test_every_form_keeps_and_reads_dates_in_the_browsers_zone(
    browser, live_server, world, quiz_course
):
    base = live_server.url
    quiz = stored_quiz(world)
    assignment = stored_assignment(world)  # opens OPENS, due CLOSES
    quiz_form = "#quiz-form"
    for zone in (EAST, WEST):
        Quiz.objects.filter(pk=quiz.pk).update(opens_at=OPENS, closes_at=CLOSES)
        context = browser.new_context(timezone_id=zone)
        context.route("**/*.css", lambda route: route.abort())
        log_in_by_cookie(context, base, world.owner)
        page = context.new_page()
        edit = f"{base}/instructor/quizzes/{quiz.pk}/edit/"

        # The quiz form shows the stored dates in the zone, says so, saves
        # them unchanged to the second.
        page.goto(edit, wait_until=READY)
        # Chromium may name a zone by an older alias (Asia/Calcutta).
        name = page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone")
        assert name in (zone, *ALIASES.get(zone, ()))
        assert page.text_content("label[for=q-opens]") == f"Opens ({name})"
        assert page.input_value("#q-opens") == shown_in(OPENS, zone)
        assert page.input_value("#q-closes") == shown_in(CLOSES, zone)
        assert page.input_value(f"{quiz_form} input[name=tz]") == name
        submit(page, quiz_form)
        assert page.url == f"{base}/instructor/quizzes/{quiz.pk}/"
        quiz.refresh_from_db()
        assert (quiz.opens_at, quiz.closes_at) == (OPENS, CLOSES), zone

        # A typed time is that zone's; refused (in one zone: the script is
        # the same), it comes back as typed, in that zone, and saves so.
        page.goto(edit, wait_until=READY)
        page.fill("#q-opens", "2031-03-01T09:15")
        if zone == WEST:
            page.click("#slot-text summary")  # the slot text, folded by the picker
            slots = page.input_value("#q-slots")
            page.fill("#q-slots", "one: lesson:x")
            submit(page, quiz_form)
            assert page.is_visible("#form-error")
            assert page.input_value("#q-opens") == "2031-03-01T09:15"
            assert page.text_content("label[for=q-opens]") == f"Opens ({name})"
            page.fill("#q-slots", slots)
        submit(page, quiz_form)
        quiz.refresh_from_db()
        assert quiz.opens_at == zoned("2031-03-01T09:15", zone), zone
        assert quiz.closes_at == CLOSES

        # An accommodation's later close, typed in the zone (the quiz's page).
        assert page.url == f"{base}/instructor/quizzes/{quiz.pk}/"
        page.select_option("#acc-learner", "leo")
        page.fill("#acc-closes", "2031-04-03T23:45")
        submit(page, "form[action$='/accommodations/']")
        closes = QuizAccommodation.objects.get(quiz=quiz, learner=world.leo).closes_at
        assert closes == zoned("2031-04-03T23:45", zone), zone

        # The assignment form saved unchanged; an extension typed in the zone.
        Assignment.objects.filter(pk=assignment.pk).update(
            opens_at=OPENS, due_at=CLOSES
        )
        page.goto(
            f"{base}/instructor/assignments/{assignment.pk}/edit/", wait_until=READY
        )
        assert page.input_value("#due_at") == shown_in(CLOSES, zone)
        submit(page, "#assignment-form")
        assignment.refresh_from_db()
        assert (assignment.opens_at, assignment.due_at) == (OPENS, CLOSES), zone
        page.select_option("#ext-learner", "lea")
        page.fill("#ext-due", "2031-09-01T05:00")
        submit(page, "form[action$='/extensions/']")
        due = assignment.extensions.get(learner=world.lea).due_at
        assert due == zoned("2031-09-01T05:00", zone), zone
        context.close()
