"""API tokens: one per client, each expiring and revocable on its own; all of a
user's die with the password they came from."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from quiz.core.models import ApiToken
from tests.test_settings import settings_with

pytestmark = pytest.mark.django_db

GOOD = "pw-Secret-123"


def issue(username="lea", password=GOOD, **extra) -> dict:
    response = APIClient().post(
        reverse("api-token"),
        {"username": username, "password": password, **extra},
        format="json",
    )
    assert response.status_code == 200, response.content
    return response.json()


def with_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def exercises(key: str):
    return with_token(key).get(reverse("api-exercises"))


def test_a_token_says_when_it_expires(learner, settings):
    body = issue()
    expires_at = datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
    expected = timezone.now() + timedelta(hours=settings.API_TOKEN_TTL_HOURS)
    assert abs(expires_at - expected) < timedelta(minutes=1)
    assert exercises(body["token"]).status_code == 200


def test_an_expired_token_gets_a_clear_401_and_a_new_post_replaces_it(
    learner, settings
):
    key = issue()["token"]
    ApiToken.objects.filter(prefix=key[:8]).update(
        created_at=timezone.now()
        - timedelta(hours=settings.API_TOKEN_TTL_HOURS, minutes=1)
    )
    response = exercises(key)
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]
    assert response["WWW-Authenticate"] == "Token"
    fresh = issue()["token"]
    assert fresh != key and exercises(fresh).status_code == 200


def test_the_ttl_comes_from_the_environment(learner, settings):
    settings.API_TOKEN_TTL_HOURS = 1
    key = issue()["token"]
    ApiToken.objects.filter(prefix=key[:8]).update(
        created_at=timezone.now() - timedelta(hours=1)
    )
    assert exercises(key).status_code == 401


def test_a_malformed_ttl_stops_the_process_by_name():
    result = settings_with({"SECRET_KEY": "k", "API_TOKEN_TTL_HOURS": "a month"})
    assert result.returncode != 0
    assert "API_TOKEN_TTL_HOURS='a month' is not an integer" in result.stderr
    result = settings_with({"SECRET_KEY": "k", "API_TOKEN_TTL_HOURS": "0"})
    assert "API_TOKEN_TTL_HOURS=0 is below the minimum 1" in result.stderr


def test_delete_revokes_the_callers_token(learner):
    key = issue()["token"]
    response = with_token(key).delete(reverse("api-token"))
    assert response.status_code == 204
    assert not ApiToken.objects.filter(prefix=key[:8]).exists()
    refused = exercises(key)
    assert refused.status_code == 401
    assert "revoked" in refused.json()["detail"]
    assert with_token(key).delete(reverse("api-token")).status_code == 401


def test_delete_without_a_valid_token_is_401(learner):
    assert APIClient().delete(reverse("api-token")).status_code == 401
    assert with_token("f" * 40).delete(reverse("api-token")).status_code == 401
    session = APIClient()
    session.force_login(learner)
    response = session.delete(reverse("api-token"))
    assert response.status_code == 401 and response.json()["detail"]


def test_a_token_can_still_be_requested_with_a_stale_token_in_the_headers(learner):
    response = with_token("f" * 40).post(
        reverse("api-token"), {"username": "lea", "password": GOOD}, format="json"
    )
    assert response.status_code == 200


def test_set_password_and_save_revokes_every_token(learner):
    key = issue()["token"]
    other = issue(name="notebook")["token"]
    learner.set_password("a-New-pass-phrase-7")
    learner.save()
    assert exercises(key).status_code == 401
    assert exercises(other).status_code == 401
    assert not ApiToken.objects.filter(user=learner).exists()
    assert issue(password="a-New-pass-phrase-7")["token"] != key


def test_other_saves_of_the_user_keep_the_token(learner):
    key = issue()["token"]
    learner.first_name = "Lea"
    learner.save()
    learner.save(update_fields=["last_login"])
    assert exercises(key).status_code == 200


def test_an_admin_password_change_rotates_the_token(client, learner, admin_user):
    key = issue()["token"]
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:auth_user_password_change", args=[learner.pk]),
        {
            "password1": "a-New-pass-phrase-7",
            "password2": "a-New-pass-phrase-7",
            "usable_password": "true",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert exercises(key).status_code == 401


def test_the_own_password_change_view_rotates_the_token(client, admin_user):
    key = issue("ada")["token"]
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:password_change"),
        {
            "old_password": GOOD,
            "new_password1": "a-New-pass-phrase-7",
            "new_password2": "a-New-pass-phrase-7",
        },
    )
    assert response.status_code == 302
    assert exercises(key).status_code == 401


def test_the_schema_documents_issue_and_revoke(client):
    import json

    paths = json.loads(
        client.get(reverse("schema"), HTTP_ACCEPT="application/json").content
    )["paths"]
    token = paths["/api/v1/auth/token/"]
    assert "200" in token["post"]["responses"] and "429" in token["post"]["responses"]
    assert set(token["delete"]["responses"]) == {"204", "401"}


def test_each_log_in_gets_its_own_token_and_logging_out_one_keeps_the_others(
    learner,
):
    laptop = issue(name="laptop")
    notebook = issue(name="notebook")
    assert laptop["token"] != notebook["token"]
    assert laptop["name"] == "laptop" and isinstance(laptop["id"], int)
    assert with_token(laptop["token"]).delete(reverse("api-token")).status_code == 204
    assert exercises(laptop["token"]).status_code == 401
    assert exercises(notebook["token"]).status_code == 200


def test_only_a_hash_of_the_key_is_stored(learner):
    key = issue()["token"]
    row = ApiToken.objects.get(user=learner)
    assert key not in {row.key_hash, row.prefix, row.name}
    assert row.prefix == key[:8] and len(row.key_hash) == 64


def test_the_token_list_names_each_client_and_marks_the_caller(learner):
    laptop = issue(name="laptop", scopes=["learn", "manage-tokens"])
    issue(name="notebook")
    response = with_token(laptop["token"]).get(reverse("api-tokens"))
    assert response.status_code == 200
    listed = {t["name"]: t for t in response.json()}
    assert set(listed) == {"laptop", "notebook"}
    assert listed["laptop"]["current"] and not listed["notebook"]["current"]
    assert listed["laptop"]["last_used_at"] is not None  # this very request
    assert listed["notebook"]["last_used_at"] is None
    assert listed["laptop"]["prefix"] == laptop["token"][:8]
    assert set(listed["laptop"]) == {
        "id", "name", "prefix", "created_at", "last_used_at", "expires_at",
        "scopes", "current",
    }  # fmt: skip
    assert listed["laptop"]["scopes"] == ["learn", "manage-tokens"]
    assert listed["notebook"]["scopes"] == ["learn"]
    assert laptop["token"] not in response.content.decode()


def test_a_log_in_without_a_name_gets_one(learner):
    body = issue()
    assert body["name"] == "API token"


def test_a_token_is_revoked_by_id_and_only_by_its_owner(learner, make_user):
    laptop = issue(name="laptop", scopes=["learn", "manage-tokens"])
    notebook = issue(name="notebook")
    make_user("bob", "learner")
    bob = issue("bob", scopes=["manage-tokens"])
    url = reverse("api-token-detail", args=[notebook["id"]])
    assert with_token(bob["token"]).delete(url).status_code == 404
    assert exercises(notebook["token"]).status_code == 200
    assert with_token(laptop["token"]).delete(url).status_code == 204
    assert exercises(notebook["token"]).status_code == 401
    assert exercises(laptop["token"]).status_code == 200
    again = with_token(laptop["token"]).delete(url)
    assert again.status_code == 404 and "no token" in again.json()["detail"]
    huge = reverse("api-token-detail", args=[10**30])
    assert with_token(laptop["token"]).delete(huge).status_code == 404


def test_a_session_lists_and_revokes_tokens_too(learner):
    notebook = issue(name="notebook")
    session = APIClient()
    session.force_login(learner)
    listed = session.get(reverse("api-tokens")).json()
    assert [(t["name"], t["current"]) for t in listed] == [("notebook", False)]
    url = reverse("api-token-detail", args=[notebook["id"]])
    assert session.delete(url).status_code == 204
    assert exercises(notebook["token"]).status_code == 401


def test_a_name_too_long_is_refused_clearly(learner):
    response = APIClient().post(
        reverse("api-token"),
        {"username": "lea", "password": GOOD, "name": "x" * 101},
        format="json",
    )
    assert response.status_code == 400
    assert "name" in response.json()


def test_the_schema_documents_the_token_list_and_revoke_by_id(client):
    import json

    paths = json.loads(
        client.get(reverse("schema"), HTTP_ACCEPT="application/json").content
    )["paths"]
    assert "200" in paths["/api/v1/auth/tokens/"]["get"]["responses"]
    by_id = paths["/api/v1/auth/tokens/{token_id}/"]["delete"]["responses"]
    assert {"204", "404"} <= set(by_id)


@pytest.mark.parametrize("name", ["\ud800 laptop", "lap\x00top"])
def test_a_name_the_database_cannot_store_is_a_400(learner, name):
    import json

    response = APIClient().post(
        reverse("api-token"),
        json.dumps({"username": "lea", "password": GOOD, "name": name}),
        content_type="application/json",
    )
    assert response.status_code == 400 and "name" in response.json()


def test_an_admin_sees_each_clients_token_and_revokes_one(
    client, admin_user, make_user
):
    """DRF's token admin went with its app: the admin lists ApiTokens (never
    their keys) and deleting one logs that client out, and only it."""
    from django.urls import reverse
    from rest_framework.test import APIClient

    from quiz.core.api.tokens import token_issue

    lea = make_user("lea-admin-tokens")
    laptop, laptop_key = token_issue(user=lea, name="laptop")
    _, notebook_key = token_issue(user=lea, name="notebook")
    client.force_login(admin_user)
    page = client.get(reverse("admin:quiz_apitoken_changelist")).content.decode()
    assert "laptop" in page and "notebook" in page
    assert laptop_key not in page and notebook_key not in page
    response = client.post(
        reverse("admin:quiz_apitoken_delete", args=[laptop.pk]), {"post": "yes"}
    )
    assert response.status_code == 302
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {laptop_key}")
    assert api.get("/api/v1/exercises/").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {notebook_key}")
    assert api.get("/api/v1/exercises/").status_code == 200
