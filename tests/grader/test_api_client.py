"""What the learner client (`course`) gets from the API: exercise files for a
local check and nothing more, statuses, diagnoses, engine version checks."""

from __future__ import annotations

import hashlib
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


ENGINE_WHEEL = f"grading_engine-{ENGINE_VERSION}+learner-cp311-none-any.whl"
CLIENT_WHEEL = "course_client-1.0.0-py3-none-any.whl"


@pytest.fixture
def served(tmp_path, settings):
    """A CLIENT_DIST_DIR as `make client` leaves it: two wheels (stand-ins)
    and block-param-count's real local-check bundle, in the manifest."""
    from grading_engine.learner_edition import write_bundles

    for name in (ENGINE_WHEEL, CLIENT_WHEEL):
        (tmp_path / name).write_bytes(b"PK wheel " + name.encode())
    manifest = {
        "engine": ENGINE_VERSION,
        "python": "3.11",
        "wheels": [ENGINE_WHEEL, CLIENT_WHEEL],
        "checks": write_bundles(tmp_path, ["block-param-count"]),
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    settings.CLIENT_DIST_DIR = tmp_path
    return tmp_path


@pytest.fixture
def api(learner) -> APIClient:
    client = APIClient()
    client.force_authenticate(learner)
    return client


def test_an_exercise_carries_what_a_local_check_needs_and_no_secret(
    api, block_exercise, served
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


def test_a_client_with_another_engine_is_told_what_to_install(
    api, block_exercise, served
):
    url = reverse("api-exercise", args=["block-param-count"])
    refused = api.get(url, HTTP_X_COURSE_ENGINE="0.9.0")
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"grading-engine {ENGINE_VERSION}" in detail and "0.9.0" in detail
    assert "pip install http://testserver/client/grading_engine-" in detail
    assert "./engine" not in detail  # a checkout holds every solution
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


def test_the_install_text_points_at_the_served_wheels(api, block_exercise, served):
    body = api.get(reverse("api-exercise", args=["block-param-count"])).json()
    install = body["engine"]["install"]
    assert install.startswith(
        f"pip install http://testserver/client/{ENGINE_WHEEL} "
        f"http://testserver/client/{CLIENT_WHEEL}"
    ), install
    assert "./engine" not in install and "./client" not in install


def test_an_exercise_offers_its_local_check_and_serves_it(api, block_exercise, served):
    from grading_engine.expected import decode

    body = api.get(reverse("api-exercise", args=["block-param-count"])).json()
    offered = body["local_check"]
    assert offered["url"].endswith("/api/v1/exercises/block-param-count/local-check/")
    response = api.get(offered["url"])
    assert response.status_code == 200
    assert response["Content-Type"] == "application/octet-stream"
    blob = b"".join(response.streaming_content)
    assert len(blob) == offered["bytes"]
    assert hashlib.sha256(blob).hexdigest() == offered["sha256"]
    bundle = decode(blob)
    assert [c["hidden"] for c in bundle.cases] == [False, False]
    assert b"return 12 * n_embd**2" not in blob  # the row's reference solution


def test_without_a_build_there_is_no_local_check_and_the_text_says_where(
    api, block_exercise, settings, tmp_path
):
    settings.CLIENT_DIST_DIR = tmp_path / "never-built"
    body = api.get(reverse("api-exercise", args=["block-param-count"])).json()
    assert body["local_check"] is None
    assert "http://testserver/client/" in body["engine"]["install"]
    assert "make client" in body["engine"]["install"]
    response = api.get(reverse("api-exercise-local-check", args=["block-param-count"]))
    assert response.status_code == 404
    assert "course submit" in response.json()["detail"]


def test_a_local_check_is_refused_to_another_engine(api, block_exercise, served):
    url = reverse("api-exercise-local-check", args=["block-param-count"])
    assert api.get(url, HTTP_X_COURSE_ENGINE="0.9.0").status_code == 409
    assert api.get(url).status_code == 200
    assert APIClient().get(url).status_code in (401, 403)  # no anonymous download


def test_the_client_page_and_its_wheels_are_public(client, served):
    page = client.get(reverse("client"))
    assert page.status_code == 200
    text = page.content.decode()
    assert f"pip install http://testserver/client/{ENGINE_WHEEL}" in text
    wheel = client.get(reverse("client-wheel", args=[CLIENT_WHEEL]))
    assert wheel.status_code == 200
    assert b"".join(wheel.streaming_content) == b"PK wheel " + CLIENT_WHEEL.encode()
    assert client.get("/client/manifest.json").status_code == 404
    assert client.get("/client/checks").status_code == 404
    assert client.get("/client/..%2Fmanifest.json").status_code == 404
