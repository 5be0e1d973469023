"""In Debian's Chromium: the cohort page fits the window and starts with the
overview (learners at risk first, a completion heat map), and analytics
shows the active exercise first with the untried ones behind a toggle."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from grader.models import Exercise, Submission
from quiz.content.loader import content_load
from quiz.content.models import Lesson
from quiz.learning.models import LessonRead
from teaching.cohorts import cohort_create, cohort_join
from teaching.models import CohortMembership
from tests.conftest import PROJECT_ROOT, ContentTreeBuilder, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
PASSWORD = "pw-Secret-123"
SECTIONS = ["tokens", "attention", "the-block", "training"]
LESSONS_PER_SECTION = 12  # 48 lesson columns: the wide matrix of the issue
FITS = "() => document.documentElement.scrollWidth <= window.innerWidth"
WIDTHS = "() => [document.documentElement.scrollWidth, window.innerWidth]"


@pytest.fixture
def wide_cohort(tmp_path, make_user, settings):
    """A 48-lesson course, 6 exercises, and a cohort of three: amy works
    (one exercise tried), bob joined 10 days ago and did nothing, cat read."""
    tree = ContentTreeBuilder(tmp_path / "content")
    for order, slug in enumerate(SECTIONS, start=1):
        tree.section(slug, order, slug.replace("-", " ").title() + " in depth")
        for n in range(1, LESSONS_PER_SECTION + 1):
            tree.lesson(slug, n, f"{slug}-lesson-{n:02d}-with-a-long-slug")
    content_load(root=tree.root)
    lessons = list(Lesson.objects.order_by("section__order", "order"))
    exercises = [
        Exercise.objects.create(
            slug=f"exercise-{i}",
            lesson=lessons[i],
            title=f"Exercise number {i}",
            harness="block-param-count",
            entry_point="f",
            signature="f()",
            prompt="Do it.",
            starter="def f():\n    ...\n",
            solution="def f():\n    return 1\n",
        )
        for i in range(6)
    ]
    teacher = make_user("ian", "instructor", password=PASSWORD)
    cohort = cohort_create(owner=teacher, name="Wide cohort")
    people = {}
    for name in ("amy", "bob", "cat"):
        people[name] = make_user(name, "learner", password=PASSWORD)
        cohort_join(cohort=cohort, user=people[name])
    CohortMembership.objects.filter(user=people["bob"]).update(
        joined_at=timezone.now() - timedelta(days=10)
    )
    for lesson in lessons[:LESSONS_PER_SECTION]:
        LessonRead.objects.create(user=people["amy"], lesson=lesson)
    LessonRead.objects.create(user=people["cat"], lesson=lessons[0])
    for status in ("failed", "passed"):
        Submission.objects.create(
            user=people["amy"],
            exercise=exercises[4],
            code="def f():\n    return 1\n",
            seed=0,
            status=status,
            score=1.0 if status == "passed" else 0.0,
        )
    return cohort


def test_the_cohort_page_fits_the_window_and_starts_with_the_overview(
    browser, live_server, wide_cohort
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    sign_in(page, base, "ian")
    page.goto(base + f"/instructor/cohorts/{wide_cohort.pk}/")
    page.wait_for_selector("#overview")

    assert page.evaluate(FITS), page.evaluate(WIDTHS)
    learners = page.eval_on_selector_all(
        "#overview tbody tr", "rows => rows.map(r => r.dataset.overviewLearner)"
    )
    assert learners[0] == "bob"  # at risk: first, with the reason
    assert "no activity since joining 10 days ago" in page.text_content(
        '#overview tr[data-overview-learner="bob"] td.risk'
    )
    # Headers are titles, abbreviated, with the full title on hover.
    head = page.get_attribute("#overview thead th.section-col abbr", "title")
    assert head == "1. Tokens in depth"
    # The heat map: a complete section is coloured, an untouched one is not.
    done = '#overview tr[data-overview-learner="amy"] td[data-section="tokens"]'
    none = '#overview tr[data-overview-learner="bob"] td[data-section="tokens"]'
    colour = "el => getComputedStyle(el).backgroundColor"
    assert page.get_attribute(done, "data-percent") != "0"
    assert page.eval_on_selector(done, colour) != page.eval_on_selector(none, colour)
    # The detail matrix scrolls inside its own box.
    inner = page.eval_on_selector(".matrix-wrap", "el => el.scrollWidth")
    outer = page.eval_on_selector(".matrix-wrap", "el => el.clientWidth")
    assert inner > outer
    page.screenshot(path=str(ARTIFACTS / "instructor-overview-1100.png"))

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.wait_for_selector("#overview")
    assert page.evaluate(FITS), page.evaluate(WIDTHS)
    page.screenshot(path=str(ARTIFACTS / "instructor-overview-390.png"))


def test_analytics_shows_the_active_exercise_first_and_hides_the_rest(
    browser, live_server, wide_cohort
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    page = browser.new_context(viewport={"width": 1100, "height": 900}).new_page()
    sign_in(page, base, "ian")
    page.goto(base + f"/instructor/cohorts/{wide_cohort.pk}/analytics/")
    rows = page.eval_on_selector_all(
        "#exercise-table tbody tr", "rows => rows.map(r => r.dataset.exercise)"
    )
    assert rows == ["exercise-4"]
    assert not page.is_visible("#untried-table")
    assert "5 other exercises" in page.text_content("#untried-exercises summary")
    page.wait_for_function(
        "() => window.Chart"
        " && Chart.getChart(document.getElementById('exercise-chart'))"
    )
    labels = page.evaluate(
        "() => Chart.getChart(document.getElementById('exercise-chart')).data.labels"
    )
    assert labels == ["Exercise number 4"]
    page.screenshot(path=str(ARTIFACTS / "instructor-analytics-active.png"))
    page.click("#untried-exercises summary")
    assert page.is_visible("#untried-table")
    untried = page.eval_on_selector_all(
        "#untried-table tbody tr", "rows => rows.map(r => r.dataset.exercise)"
    )
    assert untried == [f"exercise-{i}" for i in (0, 1, 2, 3, 5)]
    page.screenshot(
        path=str(ARTIFACTS / "instructor-analytics-untried.png"), full_page=True
    )
