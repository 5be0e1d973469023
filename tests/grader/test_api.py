"""REST API v1: auth, exercises, submissions, visibility and bad input (no worker)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from grading_engine.source import code_size_problem
from rest_framework.test import APIClient

from grader.models import Submission

pytestmark = pytest.mark.django_db

SOLUTION = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


@pytest.fixture
def exercise(block_exercise):
    return block_exercise


@pytest.fixture
def api(learner) -> APIClient:
    client = APIClient()
    client.force_authenticate(learner)
    return client


def submit(api, slug="block-param-count", code=SOLUTION):
    return api.post(
        reverse("api-submission-create", args=[slug]), {"code": code}, format="json"
    )


def test_a_token_is_issued_for_a_username_and_password(learner):
    client = APIClient()
    response = client.post(
        reverse("api-token"),
        {"username": "lea", "password": "pw-Secret-123"},
        format="json",
    )
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert client.get(reverse("api-exercises")).status_code == 200


def test_a_wrong_password_gets_no_token(learner):
    response = APIClient().post(
        reverse("api-token"), {"username": "lea", "password": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert "Unable to log in" in json.dumps(response.json())


def test_the_api_needs_authentication(exercise):
    response = APIClient().get(reverse("api-exercises"))
    assert response.status_code in (401, 403)


def test_exercises_are_listed_without_solutions(api, exercise):
    [item] = api.get(reverse("api-exercises")).json()
    assert item["slug"] == "block-param-count"
    assert item["signature"] == "block_param_count(n_embd) -> int"
    detail = api.get(item["url"]).json()
    assert detail["starter"].startswith("def block_param_count")
    text = json.dumps(detail)
    assert "12 * n_embd" not in text and "secret wrong code" not in text


def test_an_unknown_exercise_is_a_404_with_its_name(api):
    response = api.get(reverse("api-exercise", args=["nope"]))
    assert response.status_code == 404
    assert response.json()["detail"] == "No exercise named 'nope'."
    assert submit(api, slug="nope").status_code == 404


def test_a_submission_is_saved_queued_and_returns_202(api, exercise, learner):
    response = submit(api)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued"
    assert body["url"].endswith(f"/api/v1/submissions/{body['id']}/")
    assert response["Location"] == body["url"]
    row = Submission.objects.get(pk=body["id"])
    assert row.user == learner and row.code == SOLUTION and row.status == "queued"


def test_a_queued_submission_shows_its_queue_position(api, exercise):
    first = submit(api).json()
    second = submit(api).json()
    assert api.get(first["url"]).json()["queue_position"] == 1
    detail = api.get(second["url"]).json()
    assert detail["queue_position"] == 2
    assert detail["status"] == "queued" and detail["checks"] == []
    assert set(detail["timings"]) == {"queued_ms", "grade_ms", "total_ms", "elapsed_ms"}
    assert detail["timings"]["elapsed_ms"] >= 0  # waiting so far, ticking


def test_the_queue_position_counts_only_the_learners_own_submissions(
    api, exercise, make_user
):
    other = APIClient()
    other.force_authenticate(make_user("busy"))
    for _ in range(2):
        assert submit(other).status_code == 202  # queued before ours
    mine = submit(api).json()
    assert api.get(mine["url"]).json()["queue_position"] == 1
    assert submit(other).status_code == 202
    second = submit(api).json()
    assert api.get(second["url"]).json()["queue_position"] == 2
    Submission.objects.filter(pk=mine["id"]).update(status="running")
    assert api.get(mine["url"]).json()["queue_position"] is None
    assert api.get(second["url"]).json()["queue_position"] == 1


def test_learners_see_only_their_own_submissions(api, exercise, make_user):
    url = submit(api).json()["url"]
    other = APIClient()
    other.force_authenticate(make_user("mallory"))
    assert other.get(url).status_code == 404
    assert other.get(url + "gradescope/").status_code == 404


def test_a_malformed_submission_id_is_a_404(api):
    assert api.get("/api/v1/submissions/not-a-uuid/").status_code == 404


def test_code_over_the_size_cap_is_refused_clearly(api, exercise, settings):
    settings.SUBMISSION_MAX_BYTES = 1000
    response = submit(api, code="x = 1\n" * 500)
    assert response.status_code == 400
    assert "the limit is 1,000 bytes" in response.json()["code"][0]
    assert not Submission.objects.exists()


def test_the_exercise_says_the_size_limit_the_client_checks_against(
    api, exercise, settings
):
    settings.SUBMISSION_MAX_BYTES = 1000
    detail = api.get(reverse("api-exercise", args=[exercise.slug])).json()
    assert detail["max_code_bytes"] == 1000
    response = submit(api, code="#" * 1001)
    assert response.json()["code"] == [code_size_problem(1001, 1000)]


@pytest.mark.parametrize(
    "body",
    [{}, {"code": ""}, {"code": 12}, {"code": None}, {"code": ["a"]}, [], "text"],
)
def test_wrong_shapes_of_input_are_400s(api, exercise, body):
    response = api.post(
        reverse("api-submission-create", args=["block-param-count"]),
        body,
        format="json",
    )
    assert response.status_code == 400
    assert not Submission.objects.exists()


def test_non_utf8_bodies_are_400s(api, exercise):
    response = api.generic(
        "POST",
        reverse("api-submission-create", args=["block-param-count"]),
        b'{"code": "\xff\xfe"}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "not valid UTF-8" in response.json()["detail"]


def test_huge_bodies_are_413s(api, exercise):
    response = api.generic(
        "POST",
        reverse("api-submission-create", args=["block-param-count"]),
        json.dumps({"code": "x" * 3_000_000}),
        content_type="application/json",
    )
    assert response.status_code == 413
    assert "over 1,048,576 bytes" in response.json()["detail"]


def test_a_nul_character_is_refused(api, exercise):
    response = submit(api, code="x = 1\x00")
    assert response.status_code == 400
    assert response.json()["code"] == ["Null characters are not allowed."]


def test_a_lone_surrogate_in_the_code_is_refused(api, exercise):
    response = api.generic(
        "POST",
        reverse("api-submission-create", args=["block-param-count"]),
        '{"code": "x = \'\\ud800\'"}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "surrogate" in response.json()["code"][0].lower()
    assert not Submission.objects.exists()


def test_submissions_are_rate_limited_per_user(api, exercise, settings, make_user):
    # Enforced in services.submission_create; read when each submission arrives.
    settings.SUBMISSION_RATE = "3/min"
    codes = [submit(api).status_code for _ in range(4)]
    assert codes == [202, 202, 202, 429]
    response = submit(api)
    assert "throttled" in response.json()["detail"].lower()
    assert 1 <= int(response["Retry-After"]) <= 60
    other = APIClient()
    other.force_authenticate(make_user("bob"))
    assert submit(other).status_code == 202


def test_gradescope_export_has_one_test_per_check(api, exercise, learner):
    submission = Submission.objects.create(
        user=learner,
        exercise=exercise,
        code=SOLUTION,
        seed=1,
        status="failed",
        score=0.5,
        grade_ms=120.0,
        checks=[
            {"name": "d=768", "passed": True, "message": "7,087,872 as expected"},
            {
                "name": "d=64",
                "passed": False,
                "message": "got 1, expected 2",
                "hidden": True,
            },
        ],
    )
    body = api.get(reverse("api-submission-gradescope", args=[submission.pk])).json()
    assert body["score"] == 1.0 and body["execution_time"] == 0.12
    assert [t["name"] for t in body["tests"]] == ["d=768", "d=64"]
    assert body["tests"][1] == {
        "name": "d=64",
        "score": 0.0,
        "max_score": 1.0,
        "status": "failed",
        "output": "got 1, expected 2",
        "visibility": "after_published",
    }


def test_the_openapi_schema_describes_every_endpoint(client):
    response = client.get(reverse("schema"), HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = json.loads(response.content)["paths"]
    for path in [
        "/api/v1/auth/token/",
        "/api/v1/exercises/",
        "/api/v1/exercises/{slug}/",
        "/api/v1/exercises/{slug}/submissions/",
        "/api/v1/submissions/{submission_id}/",
        "/api/v1/submissions/{submission_id}/gradescope/",
    ]:
        assert path in paths, path
    assert "202" in paths["/api/v1/exercises/{slug}/submissions/"]["post"]["responses"]


def test_the_interactive_docs_load_local_assets_only(client):
    html = client.get(reverse("api-docs")).content.decode()
    assert "swagger-ui" in html.lower()
    assert "cdn." not in html and "unpkg" not in html


def test_unknown_api_paths_answer_json_404s(api):
    response = api.get("/api/v1/no/such/thing/")
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_the_openapi_schema_validates_without_warnings(tmp_path):
    from django.core.management import call_command

    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/v1/exercises/{slug}/submissions/" in out.read_text()


def test_a_queued_submission_says_what_it_waits_for(api, exercise, learner):
    first = submit(api).json()
    assert api.get(first["url"]).json()["waiting_for"] == "a free grader"
    Submission.objects.filter(pk=first["id"]).update(status="running")
    second = submit(api).json()  # while the first is being graded
    assert second["status"] == "queued"
    detail = api.get(second["url"]).json()
    assert detail["waiting_for"] == "your earlier submission"
    assert detail["queue_position"] == 1
    assert api.get(first["url"]).json()["waiting_for"] is None


def test_a_submission_is_accepted_while_the_cache_is_away(api, exercise, settings):
    """Redis restarting (nothing listens on its port): the rate is not
    counted and the submission is saved; the outstanding cap, kept in the
    database, still holds. The deadline drill found a 500 here."""
    from benchmarks.private_services import free_port

    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",
        }
    }
    settings.SUBMISSION_RATE = "1/min"
    settings.SUBMISSION_MAX_OUTSTANDING = 2
    assert [submit(api).status_code for _ in range(3)] == [202, 202, 429]
    assert Submission.objects.filter(status="queued").count() == 2
