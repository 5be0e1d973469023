"""Brute-force protection on every log-in: HTML, admin and the API token."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.urls import reverse
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

GOOD = "pw-Secret-123"
LOCKED = "Too many failed log-in attempts"


def html_login(client, username, password, ip="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip
    )


def admin_login(client, username, password, ip="10.0.0.1"):
    return client.post(
        reverse("admin:login"),
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR=ip,
    )


def api_login(username, password, ip="10.0.0.1"):
    return APIClient().post(
        reverse("api-token"),
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=ip,
    )


def assert_api_locked(response, settings):
    assert response.status_code == 429
    assert LOCKED in response.json()["detail"]
    retry_after = int(response["Retry-After"])
    assert 0 < retry_after <= settings.LOGIN_COOLOFF_MINUTES * 60


def test_defaults_are_a_few_per_username_and_more_per_ip(settings):
    assert 5 <= settings.LOGIN_FAILURE_LIMIT <= 10
    assert settings.LOGIN_IP_FAILURE_LIMIT > settings.LOGIN_FAILURE_LIMIT
    from axes.backends import AxesStandaloneBackend
    from django.utils.module_loading import import_string

    first = import_string(settings.AUTHENTICATION_BACKENDS[0])
    assert issubclass(first, AxesStandaloneBackend)


def test_the_token_endpoint_locks_a_username_even_for_the_right_password(
    learner, settings
):
    for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
        assert api_login("lea", "wrong").status_code == 400
    assert_api_locked(api_login("lea", "wrong"), settings)
    assert_api_locked(api_login("lea", GOOD), settings)


def test_the_html_login_locks_with_a_page_that_says_why(client, learner, settings):
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        html_login(client, "lea", "wrong")
    response = html_login(client, "lea", GOOD)
    assert response.status_code == 429
    assert LOCKED in response.content.decode()
    assert "text/html" in response["Content-Type"]
    assert int(response["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


def test_the_admin_login_is_locked_too(client, admin_user, settings):
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        admin_login(client, "ada", "wrong")
    response = admin_login(client, "ada", GOOD)
    assert response.status_code == 429
    assert LOCKED in response.content.decode()
    assert client.get("/admin/").status_code == 302  # still not signed in


def test_one_username_is_counted_across_ips_and_paths(client, learner, settings):
    limit = settings.LOGIN_FAILURE_LIMIT
    for n in range(limit):
        if n % 2:
            html_login(client, "lea", "wrong", ip=f"10.0.1.{n}")
        else:
            api_login("lea", "wrong", ip=f"10.0.2.{n}")
    assert_api_locked(api_login("lea", GOOD, ip="10.9.9.9"), settings)
    assert html_login(client, "lea", GOOD, ip="10.9.9.8").status_code == 429


def test_one_ip_is_counted_across_usernames(client, make_user, settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_IP_FAILURE_LIMIT = 4
    make_user("victim")
    for name in ["u1", "u2", "u3", "u4"]:  # one failure each: no username limit
        api_login(name, "wrong", ip="10.0.3.3")
    assert_api_locked(api_login("victim", GOOD, ip="10.0.3.3"), settings)
    assert html_login(client, "victim", GOOD, ip="10.0.3.3").status_code == 429
    # Another machine is not affected.
    assert api_login("victim", GOOD, ip="10.0.3.4").status_code == 200


def test_a_success_resets_the_username_count(client, learner, settings):
    for _ in range(2):
        for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
            html_login(client, "lea", "wrong")
        assert api_login("lea", GOOD).status_code == 200
    for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
        api_login("lea", "wrong")
    assert html_login(client, "lea", GOOD).status_code == 302
    client.post(reverse("logout"))
    for _ in range(settings.LOGIN_FAILURE_LIMIT - 1):
        api_login("lea", "wrong")
    assert api_login("lea", GOOD).status_code == 200  # the HTML success reset it


def test_the_limits_come_from_the_environment_and_bad_values_stop_the_process():
    from tests.test_settings import settings_with

    result = settings_with({"SECRET_KEY": "k", "LOGIN_FAILURE_LIMIT": "lots"})
    assert "LOGIN_FAILURE_LIMIT='lots' is not an integer" in result.stderr
    result = settings_with({"SECRET_KEY": "k", "LOGIN_IP_FAILURE_LIMIT": "0"})
    assert "LOGIN_IP_FAILURE_LIMIT=0 is below the minimum 1" in result.stderr
    result = settings_with({"SECRET_KEY": "k", "LOGIN_COOLOFF_MINUTES": "-5"})
    assert "LOGIN_COOLOFF_MINUTES=-5 is below the minimum 1" in result.stderr


def test_logging_into_your_own_account_does_not_clear_your_ips_count(
    make_user, settings
):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_IP_FAILURE_LIMIT = 4
    make_user("eve")
    make_user("victim")
    for name in ["u1", "u2", "u3"]:
        api_login(name, "wrong", ip="10.0.4.4")
    assert api_login("eve", GOOD, ip="10.0.4.4").status_code == 200
    api_login("u4", "wrong", ip="10.0.4.4")
    assert_api_locked(api_login("victim", GOOD, ip="10.0.4.4"), settings)


def test_the_lock_lifts_when_the_cool_off_has_passed(learner, settings):
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        api_login("lea", "wrong")
    assert api_login("lea", GOOD).status_code == 429
    cool_off = timedelta(minutes=settings.LOGIN_COOLOFF_MINUTES)
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= cool_off + timedelta(seconds=1)
        attempt.save()
    response = api_login("lea", GOOD)
    assert response.status_code == 200 and response.json()["token"]


def test_retry_after_counts_down_from_the_last_failure(learner, settings):
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        api_login("lea", "wrong")
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=5)
    )
    seconds = int(api_login("lea", GOOD)["Retry-After"])
    expected = (settings.LOGIN_COOLOFF_MINUTES - 5) * 60
    assert expected - 30 <= seconds <= expected + 1


def test_refused_attempts_during_a_lock_do_not_extend_it(learner, settings):
    for _ in range(settings.LOGIN_FAILURE_LIMIT):
        api_login("lea", "wrong")
    before = list(AccessAttempt.objects.values_list("attempt_time", flat=True))
    for _ in range(3):
        assert api_login("lea", "wrong").status_code == 429
    assert list(AccessAttempt.objects.values_list("attempt_time", flat=True)) == before


def test_a_login_without_a_request_is_not_refused_by_the_guard(client, make_user):
    """Django's test client (and scripts) authenticate without a request."""
    make_user("norequest", password="pw-Secret-123")
    assert client.login(username="norequest", password="pw-Secret-123")
    assert not client.login(username="norequest", password="wrong")
