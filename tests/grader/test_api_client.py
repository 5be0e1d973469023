"""What the learner client (`course`) gets from the API: exercise files for a
local check and nothing more, statuses, diagnoses, engine version checks."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from grading_engine import __version__ as ENGINE_VERSION
from rest_framework.test import APIClient

from grader.models import Submission
from quiz.content.models import Diagnosis, Lesson, Section

pytestmark = pytest.mark.django_db


@pytest.fixture
def lesson(db):
    section = Section.objects.create(slug="block", order=1, title="The block")
    return Lesson.objects.create(
        section=section, slug="tying", order=1, title="Tying", question="?", body="b"
    )


@pytest.fixture
def api(learner) -> APIClient:
    client = APIClient()
    client.force_authenticate(learner)
    return client


def test_an_exercise_carries_what_a_local_check_needs_and_no_secret(
    api, block_exercise
):
    block_exercise.options = {"rtol": 1e-3, "time_budget_seconds": 9, "seed": 7}
    block_exercise.save()
    response = api.get(reverse("api-exercise", args=["block-param-count"]))
    assert response.status_code == 200
    body = response.json()
    assert body["harness"] == "block-param-count"
    assert body["check_options"] == {"rtol": 1e-3}
    assert body["engine"]["version"] == ENGINE_VERSION
    assert "pip install" in body["engine"]["install"]
    assert body["html_url"].endswith("/exercises/block-param-count/")
    assert response["X-Course-Engine"] == ENGINE_VERSION
    text = json.dumps(body)
    assert "return 12 * n_embd**2" not in text  # the reference solution
    assert "secret wrong code" not in text
    assert not {"solution", "wrong_solutions", "options", "seed", "cases"} & set(body)


def test_the_list_says_which_exercises_the_learner_passed(api, learner, block_exercise):
    url = reverse("api-exercises")
    assert api.get(url).json()[0]["status"] == "not started"
    Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", status="failed", seed=1
    )
    assert api.get(url).json()[0]["status"] == "attempted"
    Submission.objects.create(
        user=learner, exercise=block_exercise, code="y", status="passed", seed=1
    )
    Submission.objects.create(
        user=learner, exercise=block_exercise, code="z", status="failed", seed=1
    )
    assert api.get(url).json()[0]["status"] == "passed"


def test_another_learners_pass_is_not_mine(api, make_user, block_exercise):
    other = make_user("someone-else")
    Submission.objects.create(
        user=other, exercise=block_exercise, code="y", status="passed", seed=1
    )
    assert api.get(reverse("api-exercises")).json()[0]["status"] == "not started"


def test_a_client_with_another_engine_is_told_what_to_install(api, block_exercise):
    url = reverse("api-exercise", args=["block-param-count"])
    refused = api.get(url, HTTP_X_COURSE_ENGINE="0.9.0")
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"grading-engine {ENGINE_VERSION}" in detail and "0.9.0" in detail
    assert "pip install ./engine ./client" in detail
    assert api.get(url, HTTP_X_COURSE_ENGINE=ENGINE_VERSION).status_code == 200
    listed = api.get(reverse("api-exercises"), HTTP_X_COURSE_ENGINE="0.9.0")
    assert listed.status_code == 200
    assert "0.9.0" in listed["X-Course-Engine-Warning"]
    assert "X-Course-Engine-Warning" not in api.get(reverse("api-exercises"))


def test_diagnoses_list_their_summaries_and_lessons(api, lesson):
    row = Diagnosis.objects.create(slug="copied-not-shared", summary="Two tensors.")
    row.lessons.add(lesson)
    body = api.get(reverse("api-diagnoses")).json()
    [item] = [d for d in body if d["slug"] == "copied-not-shared"]
    assert item["summary"] == "Two tensors."
    assert item["lessons"][0]["slug"] == lesson.slug
    assert item["lessons"][0]["url"].endswith(f"/lessons/{lesson.slug}/")


def test_a_submission_links_to_its_page(api, learner, block_exercise):
    submission = Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", status="failed", seed=1
    )
    body = api.get(reverse("api-submission", args=[submission.pk])).json()
    assert body["html_url"] == f"http://testserver/submissions/{submission.pk}/"
