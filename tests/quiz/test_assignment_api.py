"""Assignments API: CRUD, gradebook (JSON, CSV, Canvas), extensions, overrides."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from grader.models import Submission
from quiz.core.models import AuditEntry
from teaching.models import Assignment
from tests.quiz.cohort_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
NOW = timezone.now().replace(microsecond=0)


def api(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def body(**changes) -> dict:
    values = {
        "title": "Week 1",
        "opens_at": (NOW - timedelta(days=7)).isoformat(),
        "due_at": (NOW - timedelta(days=1)).isoformat(),
        "late_policy": "penalty",
        "penalty_per_day": 0.1,
        "penalty_cap": 0.5,
        "items": [
            {"kind": "exercise", "slug": "ex-a", "weight": 2},
            {"kind": "lesson", "slug": "first-lesson"},
        ],
    }
    values.update(changes)
    return values


def create(world, **changes) -> dict:
    response = api(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/assignments/",
        body(**changes),
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_an_owner_creates_lists_reads_and_edits_an_assignment(world, course):
    created = create(world)
    assert created["title"] == "Week 1" and created["archived"] is False
    assert [(i["kind"], i["slug"], i["weight"]) for i in created["items"]] == [
        ("exercise", "ex-a", 2.0),
        ("lesson", "first-lesson", 1.0),
    ]
    client = api(world.owner)
    listed = client.get(f"/api/v1/cohorts/{world.cohort.pk}/assignments/").json()
    assert [a["id"] for a in listed] == [created["id"]]
    assert client.get(created["url"]).json() == created
    changed = client.patch(
        created["url"],
        {"title": "Week one", "items": [{"kind": "exercise", "slug": "ex-b"}]},
        format="json",
    ).json()
    assert changed["title"] == "Week one"
    assert [i["slug"] for i in changed["items"]] == ["ex-b"]
    entry = AuditEntry.objects.filter(
        model="teaching.Assignment", action="update"
    ).get()
    assert entry.changes["items"] == [["exercise: ex-a x2", "lesson: first-lesson x1"],
                                      ["exercise: ex-b x1"]]  # fmt: skip
    assert entry.actor == world.owner


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"due_at": (NOW - timedelta(days=8)).isoformat()}, "due_at",
         "The due date is before the opening date."),
        ({"items": []}, "items", "An assignment needs at least one item."),
        ({"items": [{"kind": "exercise", "slug": "nope"}]}, "items",
         "No exercise 'nope'."),
        ({"penalty_per_day": 1.5}, "penalty_per_day",
         "penalty_per_day must be from 0 to 1."),
        ({"items": [{"kind": "exercise", "slug": "ex-a", "weight": 0}]}, "items",
         "An item's weight must be above 0 and at most 1000."),
        ({"title": "   "}, "title", None),
    ],
)  # fmt: skip
def test_a_bad_assignment_is_a_400_that_creates_nothing(
    world, course, changes, field, message
):
    response = api(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/assignments/",
        body(**changes),
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()
    assert field in errors
    if message:
        assert errors[field] == [message]
    assert not Assignment.objects.exists()


@pytest.mark.parametrize(
    ("role", "code"),
    [("anonymous", 401), ("learner", 403), ("other", 404), ("superuser", 200)],
)
def test_only_the_owner_or_a_superuser_reaches_an_assignment(world, course, role, code):
    created = create(world)
    client = api(world.by_role(role))
    for path in (created["url"], created["gradebook_url"]):
        response = client.get(path)
        assert response.status_code in ((401, 403) if code == 401 else (code,))
    listing = client.get(f"/api/v1/cohorts/{world.cohort.pk}/assignments/")
    assert listing.status_code in ((401, 403) if code == 401 else (code,))


def test_a_co_instructor_reaches_it_and_a_made_up_id_is_a_404(world, course):
    created = create(world)
    other = world.by_role("other")
    assert api(other).get(created["url"]).status_code == 404
    world.cohort.instructors.add(other)  # co-teaches (an LMS course's teachers)
    assert api(other).get(created["url"]).status_code == 200
    assert api(other).get(created["gradebook_url"]).status_code == 200
    for made_up in (10**6, 2**63):
        assert (
            api(world.owner).get(f"/api/v1/assignments/{made_up}/").status_code == 404
        )


def test_an_assignment_with_scores_is_archived_not_deleted(world, course):
    empty, scored = create(world), create(world, title="Week 2")
    client = api(world.owner)
    assert client.delete(empty["url"]).status_code == 204
    Submission.objects.create(
        user=world.lea, exercise=course["exercises"]["ex-a"], code="x", seed=0,
        status="passed", score=1.0,
    )  # fmt: skip
    refused = client.delete(scored["url"])
    assert refused.status_code == 409
    assert "archive it instead" in refused.json()["detail"]
    archived = client.patch(scored["url"], {"archived": True}, format="json").json()
    assert archived["archived"] is True
    assert client.get(f"/api/v1/cohorts/{world.cohort.pk}/assignments/").json() == []
    assert Assignment.objects.filter(pk=scored["id"]).exists()


def test_the_gradebook_shows_every_member_with_json_csv_and_canvas(world, course):
    created = create(world)
    exercise = course["exercises"]["ex-a"]
    row = Submission.objects.create(
        user=world.lea, exercise=exercise, code="x", seed=0, status="failed", score=0.5
    )
    Submission.objects.filter(pk=row.pk).update(created_at=NOW - timedelta(hours=1))
    client = api(world.owner)
    book = client.get(created["gradebook_url"]).json()
    assert book["assignment"]["id"] == created["id"]
    lea, leo = book["learners"]
    assert (lea["learner"], leo["learner"]) == ("lea", "leo")
    ex_item = lea["items"][0]
    # one day late (due yesterday, submitted an hour ago): 0.5 x 0.9, weight 2
    assert ex_item["score"] == pytest.approx(0.45) and ex_item["late"]
    assert ex_item["counted"]["submission"] == str(row.pk)
    assert lea["points"] == pytest.approx(0.9) and lea["possible"] == 3.0
    assert leo["score"] == 0.0 and not leo["late"]

    text = client.get(created["gradebook_url"] + "?format=csv")
    assert text["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(text.content.decode())))
    assert rows[0][:4] == ["learner", "due_at", "extended", "late"]
    assert rows[1][0] == "lea" and rows[1][-1] == "30.0"  # 0.9 of 3 points

    canvas = client.get(created["gradebook_url"] + "?format=canvas")
    rows = list(csv.reader(io.StringIO(canvas.content.decode())))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Week 1"]  # fmt: skip
    assert rows[1][0] == "Points Possible" and rows[1][-1] == "3.0"
    assert rows[2] == ["lea", "", "", "lea", "Spring 2026", "0.9"]


@pytest.mark.parametrize("accept", ["application/json", "application/json, */*;q=0.1"])
def test_a_format_download_ignores_the_accept_header(world, course, accept):
    """?format= names the file; a script's Accept: application/json (issue 28)
    or a browser's header must not turn it into a 406."""
    url = create(world)["gradebook_url"]
    client = api(world.owner)
    for fmt, first_cell in (("csv", "learner"), ("canvas", "Student")):
        response = client.get(f"{url}?format={fmt}", HTTP_ACCEPT=accept)
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith("text/csv")
        assert response.content.decode().startswith(first_cell)
    plain = client.get(url, HTTP_ACCEPT=accept)
    assert plain.status_code == 200 and plain["Content-Type"] == "application/json"
    assert plain.json()["assignment"]["gradebook_url"] == url
    asked = client.get(f"{url}?format=json", HTTP_ACCEPT="text/csv")
    assert asked.status_code == 200 and "learners" in asked.json()
    unknown = client.get(f"{url}?format=xlsx", HTTP_ACCEPT=accept)
    assert unknown.status_code == 404
    assert (
        unknown.json()["detail"]
        == "Unknown format 'xlsx': use one of json, csv, canvas."
    )


def test_extensions_are_for_members_and_later_than_the_due_date(world, course):
    created = create(world)
    path = f"/api/v1/assignments/{created['id']}/extensions/"
    client = api(world.owner)
    later = (NOW + timedelta(days=3)).isoformat()
    ok = client.post(path, {"learner": "lea", "due_at": later}, format="json")
    assert ok.status_code == 201 and ok.json()["learner"] == "lea"
    by_id = client.post(
        path, {"learner": str(world.leo.pk), "due_at": later}, format="json"
    )
    assert by_id.status_code == 201
    outsider = client.post(path, {"learner": "max", "due_at": later}, format="json")
    assert outsider.status_code == 400
    assert outsider.json() == {"learner": ["max is not in this assignment's cohort."]}
    earlier = (NOW - timedelta(days=3)).isoformat()
    early = client.post(path, {"learner": "lea", "due_at": earlier}, format="json")
    assert early.json() == {
        "due_at": ["An extension must be after the assignment's due date."]
    }
    nobody = client.post(path, {"learner": "ghost", "due_at": later}, format="json")
    assert nobody.json() == {"learner": ["No learner 'ghost'."]}
    book = client.get(created["gradebook_url"]).json()
    assert [x["extended"] for x in book["learners"]] == [True, True]


def test_an_override_needs_a_reason_and_a_score_from_0_to_1_and_is_audited(
    world, course
):
    created = create(world)
    item = created["items"][0]["id"]
    path = f"/api/v1/assignments/{created['id']}/overrides/"
    client = api(world.owner)
    for bad, field in (
        ({"score": 1.5, "reason": "x"}, "score"),
        ({"score": -0.1, "reason": "x"}, "score"),
        ({"score": 0.5, "reason": "  "}, "reason"),
    ):
        response = client.post(
            path, {"learner": "lea", "item": item, **bad}, format="json"
        )
        assert response.status_code == 400 and field in response.json()
    other = client.post(
        path, {"learner": "max", "item": item, "score": 1, "reason": "x"}, format="json"
    )
    assert other.status_code == 400 and "learner" in other.json()
    ok = client.post(
        path,
        {"learner": "lea", "item": item, "score": 0.8, "reason": "exam on paper"},
        format="json",
    )
    assert ok.status_code == 201 and ok.json()["set_by"] == "ian"
    entry = AuditEntry.objects.get(model="teaching.ScoreOverride")
    assert entry.changes["score"] == [None, 0.8] and entry.actor == world.owner
    lea = client.get(created["gradebook_url"]).json()["learners"][0]
    assert lea["items"][0]["score"] == 0.8 and lea["items"][0]["overridden"]
    assert lea["items"][0]["why"] == "set to 80% by ian: exam on paper"
