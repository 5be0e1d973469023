"""Analytics: the active exercises first, by activity, with titles; the
untried ones behind a toggle that works without JavaScript."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from teaching.cohort_analytics import cohort_analytics
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, submit

pytestmark = pytest.mark.django_db


def test_exercises_are_sorted_by_activity_then_course_order(world, course):
    ex = course["exercises"]
    submit(world.lea, ex["ex-c"], "failed")
    submit(world.leo, ex["ex-c"], "passed")
    submit(world.lea, ex["ex-b"], "passed")
    analytics = cohort_analytics(cohort=world.cohort)
    assert [e.slug for e in analytics.exercises] == ["ex-c", "ex-b", "ex-a"]
    assert [e.slug for e in analytics.active_exercises] == ["ex-c", "ex-b"]
    assert [e.slug for e in analytics.untried_exercises] == ["ex-a"]


def test_untried_exercises_keep_course_order(world, course):
    analytics = cohort_analytics(cohort=world.cohort)
    # ex-a and ex-b sit on the first lesson, ex-c on the third.
    assert [e.slug for e in analytics.exercises] == ["ex-a", "ex-b", "ex-c"]
    assert analytics.active_exercises == []


def _rows(html: str, table_id: str) -> list[str]:
    start = html.index(f'id="{table_id}"')
    table = html[start : html.index("</table>", start)]
    return re.findall(r'<tr data-exercise="([^"]+)">', table)


def test_the_page_hides_untried_exercises_in_a_details_toggle(client, world, course):
    ex = course["exercises"]
    submit(world.lea, ex["ex-c"], "failed")
    question = course["lessons"]["first-lesson"].questions.first()
    answer(world.lea, question, False)
    client.force_login(world.owner)
    html = client.get(
        reverse("instructor-analytics", args=[world.cohort.pk])
    ).content.decode()
    assert _rows(html, "exercise-table") == ["ex-c"]
    details = html[html.index('<details id="untried-exercises"') :]
    assert "Show the 2 other exercises, which nobody in this cohort has tried" in (
        details
    )
    assert _rows(details, "untried-table") == ["ex-a", "ex-b"]
    data = json.loads(
        re.search(r'id="chart-data" type="application/json">(.*?)</script>', html)[1]
    )
    assert data["exercises"]["labels"] == ["Ex C"]  # titles, no zero rows
    label = data["questions"]["labels"][0]
    lesson_title = course["lessons"]["first-lesson"].title
    assert label.startswith(f"{lesson_title}: ") and f"#{question.pk}" not in label


def test_with_no_attempts_the_page_says_so(client, world, course):
    client.force_login(world.owner)
    html = client.get(
        reverse("instructor-analytics", args=[world.cohort.pk])
    ).content.decode()
    assert 'id="no-attempts"' in html
    assert "Show all 3 exercises" in html
    assert 'id="exercise-chart"' not in html
