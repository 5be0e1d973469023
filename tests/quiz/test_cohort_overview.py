"""The cohort overview: completion per section, learners at risk first."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from quiz.learning.models import LessonRead
from teaching.cohorts import cohort_join
from teaching.matrix.build import progress_matrix
from teaching.matrix.overview import (
    AT_RISK_FAILURES,
    AT_RISK_IDLE_DAYS,
    cohort_overview,
)
from teaching.models import CohortMembership
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, read, submit

pytestmark = pytest.mark.django_db


def overview_of(world):
    return cohort_overview(
        cohort=world.cohort, matrix=progress_matrix(cohort=world.cohort)
    )


def days_ago(days: float):
    return timezone.now() - timedelta(days=days)


def test_learners_at_risk_come_first_with_the_reason(world, course, make_user):
    ex_a = course["exercises"]["ex-a"]
    first = course["lessons"]["first-lesson"]
    read(world.lea, first)
    LessonRead.objects.filter(user=world.lea).update(
        last_read_at=days_ago(AT_RISK_IDLE_DAYS + 3)
    )
    for _ in range(AT_RISK_FAILURES):
        submit(world.leo, ex_a, "failed")
    amy = make_user("amy", "learner")
    cohort_join(cohort=world.cohort, user=amy)
    read(amy, first)

    rows = overview_of(world).rows
    assert [r.username for r in rows] == ["lea", "leo", "amy"]
    assert rows[0].reasons == [f"no activity for {AT_RISK_IDLE_DAYS + 3} days"]
    assert rows[1].reasons == [
        f"{AT_RISK_FAILURES} failed submissions in the last {AT_RISK_IDLE_DAYS} "
        "days on exercises not passed yet"
    ]
    assert rows[2].reasons == [] and not rows[2].at_risk


def test_failures_count_only_recent_ones_on_exercises_not_passed(world, course):
    ex_a, ex_b = course["exercises"]["ex-a"], course["exercises"]["ex-b"]
    for _ in range(AT_RISK_FAILURES):
        submit(world.lea, ex_a, "failed")  # then passed: not stuck
    submit(world.lea, ex_a, "passed")
    for _ in range(AT_RISK_FAILURES - 1):
        submit(world.lea, ex_b, "failed")
    stale = submit(world.lea, ex_b, "failed")
    stale.__class__.objects.filter(pk=stale.pk).update(
        created_at=days_ago(AT_RISK_IDLE_DAYS + 1)
    )
    lea = next(r for r in overview_of(world).rows if r.username == "lea")
    assert lea.failures == AT_RISK_FAILURES - 1
    assert not lea.at_risk

    submit(world.lea, ex_b, "failed")
    lea = next(r for r in overview_of(world).rows if r.username == "lea")
    assert lea.failures == AT_RISK_FAILURES and lea.at_risk


def test_a_member_who_never_started_is_at_risk_only_after_the_idle_days(world):
    CohortMembership.objects.filter(user=world.lea).update(
        joined_at=days_ago(AT_RISK_IDLE_DAYS + 1)
    )
    rows = {r.username: r for r in overview_of(world).rows}
    assert rows["lea"].reasons == [
        f"no activity since joining {AT_RISK_IDLE_DAYS + 1} days ago"
    ]
    assert rows["leo"].reasons == []  # joined just now


def test_completion_per_section_counts_reads_checks_and_passes(world, course):
    first = course["lessons"]["first-lesson"]
    read(world.lea, first)
    answer(world.lea, first.questions.first(), True)
    submit(world.lea, course["exercises"]["ex-a"], "passed")
    lea = next(r for r in overview_of(world).rows if r.username == "lea")
    by_section = {c.section.slug: c for c in lea.sections}
    # basics: 2 lessons, 6 questions, 2 exercises; advanced: 1, 3, 1.
    assert (by_section["basics"].done, by_section["basics"].total) == (3, 10)
    assert by_section["basics"].percent == 30
    assert by_section["advanced"].percent == 0


def test_the_cohort_page_shows_the_overview_before_the_detail(client, world, course):
    LessonRead.objects.create(user=world.leo, lesson=course["lessons"]["first-lesson"])
    CohortMembership.objects.filter(user=world.lea).update(
        joined_at=days_ago(AT_RISK_IDLE_DAYS + 2)
    )
    client.force_login(world.owner)
    html = client.get(reverse("instructor-cohort", args=[world.cohort.pk])).content
    html = html.decode()
    assert html.index('id="overview"') < html.index('id="matrix"')
    assert re.findall(r'data-overview-learner="([^"]+)"', html) == ["lea", "leo"]
    assert 'class="at-risk"' in html
    assert f"no activity since joining {AT_RISK_IDLE_DAYS + 2} days ago" in html
    assert '<abbr title="1. Basics">1. Basics</abbr>' in html
    assert 'data-percent="10" style="--p: 10"' in html  # leo read 1 of 10
    assert '<strong id="at-risk-count">1 at risk.</strong>' in html
