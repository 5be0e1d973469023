"""API tokens expire, can be revoked, and die with the password they came from."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.test_settings import settings_with

pytestmark = pytest.mark.django_db

GOOD = "pw-Secret-123"


@pytest.fixture(autouse=True)
def _fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def issue(username="lea", password=GOOD) -> dict:
    response = APIClient().post(
        reverse("api-token"),
        {"username": username, "password": password},
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
    assert issue()["token"] == body["token"]  # a live token is handed out again


def test_an_expired_token_gets_a_clear_401_and_a_new_post_replaces_it(
    learner, settings
):
    key = issue()["token"]
    Token.objects.filter(key=key).update(
        created=timezone.now()
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
    Token.objects.filter(key=key).update(created=timezone.now() - timedelta(hours=1))
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
    assert not Token.objects.filter(key=key).exists()
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


def test_set_password_and_save_rotates_the_token(learner):
    key = issue()["token"]
    learner.set_password("a-New-pass-phrase-7")
    learner.save()
    assert exercises(key).status_code == 401
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
