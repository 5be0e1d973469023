"""The cohort API: roles, the same numbers as the pages, filters, errors, schema."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from quiz.core.api.tokens import token_issue
from teaching.cohort_analytics import cohort_analytics
from teaching.matrix.build import progress_matrix
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, read, submit

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "learner", "other", "owner", "superuser"]
COHORT_ENDPOINT = {
    "anonymous": 403,  # DRF answers 403 when session auth comes first
    "learner": 403,
    "other": 404,
    "owner": 200,
    "superuser": 200,
}
ENDPOINTS = ["api-cohort-matrix", "api-cohort-submissions", "api-cohort-analytics"]


@pytest.fixture
def api():
    return APIClient()


def _as(api, world, role):
    user = world.by_role(role)
    if user is not None:
        _, key = token_issue(user=user, scopes=["learn", "teach"])
        api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", ENDPOINTS)
def test_cohort_endpoints_by_role(api, world, course, role, name):
    response = _as(api, world, role).get(reverse(name, args=[world.cohort.pk]))
    assert response.status_code == COHORT_ENDPOINT[role]
    assert response["Content-Type"] == "application/json"
    if response.status_code != 200:
        assert response.json()["detail"]


@pytest.mark.parametrize("role", ROLES)
def test_the_cohort_list_by_role(api, world, role):
    response = _as(api, world, role).get(reverse("api-cohorts"))
    expected = {"anonymous": 403, "learner": 403}.get(role, 200)
    assert response.status_code == expected
    if expected == 200:
        names = {c["name"] for c in response.json()}
        assert ("Spring 2026" in names) == (role in ("owner", "superuser"))
        assert ("Other group" in names) == (role in ("other", "superuser"))


def test_session_auth_works_too(world, course, client):
    client.force_login(world.owner)
    url = reverse("api-cohort-matrix", args=[world.cohort.pk])
    assert client.get(url).status_code == 200


def test_a_cohort_listing_has_the_join_link(api, world):
    body = _as(api, world, "owner").get(reverse("api-cohorts")).json()
    assert body == [
        {
            "id": world.cohort.pk,
            "name": "Spring 2026",
            "owner": "ian",
            "join_code": world.cohort.join_code,
            "join_url": f"http://testserver/cohorts/join/{world.cohort.join_code}/",
            "member_count": 2,
            "created_at": body[0]["created_at"],
        }
    ]


def _activity(world, course):
    first = course["lessons"]["first-lesson"]
    read(world.lea, first)
    answer(world.lea, first.questions.first(), True)
    answer(world.leo, first.questions.first(), False)
    submit(
        world.lea,
        course["exercises"]["ex-a"],
        "failed",
        checks=[
            {"name": "tied", "passed": False, "diagnosis": "copied-wte", "message": "m"}
        ],
        minutes_ago=5,
    )
    submit(world.lea, course["exercises"]["ex-a"], "passed")
    submit(world.max, course["exercises"]["ex-a"], "passed")  # another cohort


def test_the_matrix_endpoint_has_the_pages_numbers(api, world, course):
    _activity(world, course)
    body = (
        _as(api, world, "owner")
        .get(reverse("api-cohort-matrix", args=[world.cohort.pk]))
        .json()
    )
    assert [les["slug"] for les in body["lessons"]] == [
        "first-lesson",
        "second-lesson",
        "third-lesson",
    ]
    assert body["lessons"][0] == {
        "slug": "first-lesson",
        "title": "First Lesson",
        "section": "basics",
        "checks_total": 3,
        "exercises_total": 2,
    }
    matrix = progress_matrix(cohort=world.cohort)
    assert [r["username"] for r in body["learners"]] == ["lea", "leo"]
    for row, expected in zip(body["learners"], matrix.rows, strict=True):
        assert row["id"] == expected.user_id
        assert row["lessons_read"] == expected.lessons_read
        assert row["exercises_passed"] == expected.exercises_passed
        assert [
            (c["lesson"], c["read"], c["checks_right"], c["exercises_passed"])
            for c in row["cells"]
        ] == [
            (c.lesson.slug, c.read, c.checks_right, c.exercises_passed)
            for c in expected.cells
        ]
    assert body["learners"][0]["cells"][0] == {
        "lesson": "first-lesson",
        "read": True,
        "checks_right": 1,
        "exercises_passed": 1,
    }


def test_the_matrix_endpoint_filters_sorts_and_refuses_unknown_sections(
    api, world, course
):
    submit(world.leo, course["exercises"]["ex-c"], "passed")
    api = _as(api, world, "owner")
    url = reverse("api-cohort-matrix", args=[world.cohort.pk])
    body = api.get(url, {"section": "advanced", "sort": "-exercises"}).json()
    assert [les["slug"] for les in body["lessons"]] == ["third-lesson"]
    assert [r["username"] for r in body["learners"]] == ["leo", "lea"]
    assert (body["section"], body["sort"]) == ("advanced", "-exercises")
    response = api.get(url, {"section": "nope"})
    assert response.status_code == 400
    assert response.json() == {"section": ["No section named 'nope'."]}


def test_the_submissions_endpoint_lists_the_cohorts_work_only(api, world, course):
    _activity(world, course)
    api = _as(api, world, "owner")
    url = reverse("api-cohort-submissions", args=[world.cohort.pk])
    body = api.get(url).json()
    assert [(s["learner"], s["status"]) for s in body] == [
        ("lea", "passed"),
        ("lea", "failed"),
    ]
    failed = body[1]
    assert failed["failed_checks"] == [
        {"name": "tied", "diagnosis": "copied-wte", "message": "m"}
    ]
    assert failed["exercise"] == "ex-a" and failed["learner_id"] == world.lea.pk
    assert "def f()" in failed["code"]
    assert len(api.get(url, {"limit": 1}).json()) == 1
    assert api.get(url, {"learner": world.leo.pk}).json() == []
    assert len(api.get(url, {"exercise": "ex-a"}).json()) == 2
    assert api.get(url, {"exercise": "ex-b"}).json() == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "lots"}, "limit"),
        ({"limit": 0}, "limit"),
        ({"learner": "x"}, "learner"),
    ],
)
def test_bad_submission_filters_are_a_clear_400(api, world, params, field):
    url = reverse("api-cohort-submissions", args=[world.cohort.pk])
    response = _as(api, world, "owner").get(url, params)
    assert response.status_code == 400
    assert field in response.json()


def test_the_analytics_endpoint_has_the_pages_numbers(api, world, course):
    _activity(world, course)
    body = (
        _as(api, world, "owner")
        .get(reverse("api-cohort-analytics", args=[world.cohort.pk]))
        .json()
    )
    ex_a = next(e for e in body["exercises"] if e["slug"] == "ex-a")
    assert ex_a == {
        "slug": "ex-a",
        "title": "Ex A",
        "lesson": "first-lesson",
        "attempts": 2,
        "learners": 1,
        "learners_passed": 1,
        "pass_rate": 1.0,
        "median_attempts_to_pass": 2.0,
        "diagnoses": [{"diagnosis": "copied-wte", "count": 1, "learners": 1}],
    }
    expected = cohort_analytics(cohort=world.cohort)
    assert [(q["id"], q["percent_right"]) for q in body["questions"]] == [
        (q.id, q.percent_right) for q in expected.questions
    ]
    assert body["questions"][0]["attempts"] == 2
    assert body["questions"][0]["percent_right"] == 50.0


@pytest.mark.parametrize("learners", [2, 10])
@pytest.mark.parametrize("name", ENDPOINTS)
def test_endpoints_use_the_same_number_of_queries_for_2_or_10_learners(
    api, world, course, make_user, django_assert_max_num_queries, name, learners
):
    from teaching.cohorts import cohort_join

    for i in range(learners - 2):
        user = make_user(f"learner{i}", "learner")
        cohort_join(cohort=world.cohort, user=user)
        submit(user, course["exercises"]["ex-a"], "passed")
        read(user, course["lessons"]["first-lesson"])
    api = _as(api, world, "owner")
    with django_assert_max_num_queries(10):
        assert api.get(reverse(name, args=[world.cohort.pk])).status_code == 200


def test_the_schema_describes_the_cohort_endpoints(api, world):
    response = _as(api, world, "owner").get(reverse("schema"), {"format": "json"})
    paths = response.json()["paths"]
    for path in [
        "/api/v1/cohorts/",
        "/api/v1/cohorts/{cohort_id}/matrix/",
        "/api/v1/cohorts/{cohort_id}/submissions/",
        "/api/v1/cohorts/{cohort_id}/analytics/",
    ]:
        operation = paths[path]["get"]
        assert operation["summary"]
        assert "200" in operation["responses"] and "403" in operation["responses"]


@pytest.mark.parametrize(
    ("role", "expected"),
    [("learner", 200), ("other", 404), ("owner", 200), ("superuser", 200)],
)
def test_a_cohort_learners_submission_over_the_api_by_role(
    api, world, course, role, expected
):
    sub = submit(world.lea, course["exercises"]["ex-a"], "passed")
    response = _as(api, world, role).get(reverse("api-submission", args=[sub.pk]))
    assert response.status_code == expected
