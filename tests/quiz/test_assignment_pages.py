"""Assignment pages: the gradebook, forms, drill-down; learners' due dates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from grader.models import Submission
from quiz.core.models import AuditEntry
from teaching.assignments.services import ItemSpec, assignment_create
from teaching.models import Assignment, ScoreOverride
from tests.quiz.cohort_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
NOW = timezone.now().replace(microsecond=0)


def make(world, title="Week 1", due=NOW - timedelta(days=1), **fields):
    return assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title=title,
        opens_at=NOW - timedelta(days=7),
        due_at=due,
        items=fields.pop("items", [ItemSpec("exercise", "ex-a")]),
        **fields,
    )


def passed(user, exercise, at):
    row = Submission.objects.create(
        user=user, exercise=exercise, code="x", seed=0, status="passed", score=1.0
    )
    Submission.objects.filter(pk=row.pk).update(created_at=at)
    return row


def test_the_gradebook_lists_learners_by_assignment_and_sorts(client, world, course):
    first = make(world, late_policy="no_credit")
    make(world, title="Week 2", due=NOW + timedelta(days=7))
    passed(world.leo, course["exercises"]["ex-a"], NOW - timedelta(days=2))
    client.force_login(world.owner)
    url = reverse("instructor-gradebook", args=[world.cohort.pk])
    page = client.get(url).content.decode()
    assert "Week 1" in page and "Week 2" in page
    assert page.index(">lea<") < page.index(">leo<")  # by learner
    by_total = client.get(url + "?sort=total").content.decode()
    assert by_total.index(">leo<") < by_total.index(">lea<")  # leo scored
    by_week = client.get(url + f"?sort=a{first.pk}").content.decode()
    assert by_week.index(">leo<") < by_week.index(">lea<")
    assert "Total ▼" in by_total


@pytest.mark.parametrize(("role", "status"), [("other", 404), ("learner", 403)])
def test_the_gradebook_is_its_owners(client, world, course, role, status):
    assignment = make(world)
    client.force_login(world.by_role(role))
    urls = [
        reverse("instructor-gradebook", args=[world.cohort.pk]),
        reverse("instructor-assignment", args=[assignment.pk]),
        reverse("instructor-assignment-learner", args=[assignment.pk, world.lea.pk]),
    ]
    for url in urls:
        assert client.get(url).status_code == status, url


def test_the_form_creates_an_assignment_in_the_browsers_time_zone(
    client, world, course
):
    client.force_login(world.owner)
    url = reverse("instructor-assignment-new", args=[world.cohort.pk])
    assert b'name="tz"' in client.get(url).content
    response = client.post(
        url,
        {
            "title": "Paris week",
            "tz": "Europe/Paris",
            "opens_at": "2026-06-01T09:00",
            "due_at": "2026-06-08T18:30",
            "late_policy": "penalty",
            "penalty_per_day": "0.1",
            "penalty_cap": "0.5",
            "exercise": ["ex-a", "ex-b"],
            "weight-exercise-ex-a": "3",
            "lesson": ["first-lesson"],
        },
    )
    assignment = Assignment.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "instructor-assignment", args=[assignment.pk]
    )
    # 18:30 in Paris in June (UTC+2) is 16:30 UTC
    assert assignment.due_at == datetime(2026, 6, 8, 16, 30, tzinfo=UTC)
    assert [(i.label, i.weight) for i in assignment.items.all()] == [
        ("exercise: ex-a", 3.0),
        ("exercise: ex-b", 1.0),
        ("lesson: first-lesson", 1.0),
    ]


def test_a_refused_form_keeps_what_was_typed_and_saves_nothing(client, world, course):
    client.force_login(world.owner)
    response = client.post(
        reverse("instructor-assignment-new", args=[world.cohort.pk]),
        {
            "title": "Backwards",
            "opens_at": "2026-06-08T09:00",
            "due_at": "2026-06-01T09:00",
            "late_policy": "none",
            "exercise": ["ex-a"],
        },
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert "The due date is before the opening date." in text
    assert 'value="Backwards"' in text and 'value="ex-a" checked' in text
    assert not Assignment.objects.exists()


def test_an_override_from_the_drilldown_shows_and_is_audited(client, world, course):
    assignment = make(world)
    item = assignment.items.get()
    client.force_login(world.owner)
    drill = reverse("instructor-assignment-learner", args=[assignment.pk, world.lea.pk])
    assert "no graded attempt" in client.get(drill).content.decode()
    response = client.post(
        reverse("instructor-assignment-override", args=[assignment.pk, world.lea.pk]),
        {"item": item.pk, "score": "0.7", "reason": "oral exam"},
        follow=True,
    )
    text = response.content.decode()
    assert "Score overridden" in text and "set to 70% by ian: oral exam" in text
    assert ScoreOverride.objects.get().score == 0.7
    assert AuditEntry.objects.filter(model="teaching.ScoreOverride").count() == 1
    refused = client.post(
        reverse("instructor-assignment-override", args=[assignment.pk, world.lea.pk]),
        {"item": item.pk, "score": "2", "reason": "x"},
        follow=True,
    )
    assert "score must be from 0 to 1." in refused.content.decode()
    assert ScoreOverride.objects.get().score == 0.7


def test_the_drilldown_links_the_attempt_that_counted(client, world, course):
    assignment = make(world)
    counted = passed(world.lea, course["exercises"]["ex-a"], NOW - timedelta(days=2))
    client.force_login(world.owner)
    page = client.get(
        reverse("instructor-assignment-learner", args=[assignment.pk, world.lea.pk])
    ).content.decode()
    assert reverse("submission", args=[counted.pk]) in page
    assert "best attempt by the due date: 100%" in page


def test_an_assignment_with_scores_is_archived_from_its_page(client, world, course):
    assignment = make(world)
    passed(world.lea, course["exercises"]["ex-a"], NOW - timedelta(days=2))
    client.force_login(world.owner)
    refused = client.post(
        reverse("instructor-assignment-delete", args=[assignment.pk]), follow=True
    )
    assert "archive it instead" in refused.content.decode()
    client.post(reverse("instructor-assignment-archive", args=[assignment.pk]),
                {"archived": "1"})  # fmt: skip
    assignment.refresh_from_db()
    assert assignment.archived_at is not None
    book = client.get(reverse("instructor-gradebook", args=[world.cohort.pk]))
    assert "Archived assignments (1)" in book.content.decode()


def test_the_gradebook_downloads_as_csv_and_for_canvas(client, world, course):
    make(world)
    client.force_login(world.owner)
    plain = client.get(
        reverse("instructor-gradebook-csv", args=[world.cohort.pk, "plain"])
    )
    assert plain["Content-Type"].startswith("text/csv")
    lines = plain.content.decode().splitlines()
    assert lines[0] == "learner,Week 1 %,points,possible,total %"
    assert lines[1].startswith("lea,")
    canvas = client.get(
        reverse("instructor-gradebook-csv", args=[world.cohort.pk, "canvas"])
    ).content.decode()
    assert canvas.splitlines()[0].startswith("Student,ID,SIS User ID,SIS Login ID")
    assert (
        client.get(
            reverse("instructor-gradebook-csv", args=[world.cohort.pk, "xlsx"])
        ).status_code
        == 404
    )


def test_a_learner_sees_open_assignments_due_dates_scores_and_late_marks(
    client, world, course
):
    late = make(world, late_policy="penalty", penalty_per_day=0.5)
    future = assignment_create(
        cohort=world.cohort, actor=world.owner, title="Not open yet",
        opens_at=NOW + timedelta(days=1), due_at=NOW + timedelta(days=9),
        items=[ItemSpec("exercise", "ex-a")],
    )  # fmt: skip
    passed(world.lea, course["exercises"]["ex-a"], NOW)  # after the due date
    client.force_login(world.lea)
    home = client.get(reverse("home")).content.decode()
    assert "Your assignments" in home and late.title in home
    assert future.title not in home
    assert "Was due" in home and "late-mark" in home
    assert "50%" in home and "0.50" not in home  # a day late: half the credit
    exercise = client.get(reverse("exercise", args=["ex-a"])).content.decode()
    assert "Was due" in exercise and "for <strong>Week 1</strong>" in exercise
    client.force_login(world.max)  # in another cohort: sees none of it
    assert "Your assignments" not in client.get(reverse("home")).content.decode()


def test_an_unavailable_exercise_in_an_assignment_is_not_a_link(client, world, course):
    make(world)
    exercise = course["exercises"]["ex-a"]
    client.force_login(world.lea)
    link = f'href="{reverse("exercise", args=["ex-a"])}"'
    assert link in client.get(reverse("home")).content.decode()
    exercise.published = False  # e.g. a new version that has not verified yet
    exercise.save()
    home = client.get(reverse("home")).content.decode()
    assert link not in home
    assert f'{exercise.title} <span class="muted">(not available yet)</span>' in home
