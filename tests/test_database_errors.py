"""A database error reaches a learner as a plain 503 with Retry-After (issue 28)."""

from __future__ import annotations

import logging

import pytest
from django.test import Client

from config.database_errors import DETAIL, RETRY_AFTER_SECONDS

pytestmark = pytest.mark.urls("tests.database_error_urls")
AFTER_VIEW = "tests.database_error_urls.LockedAfterViewMiddleware"
AFTER_VIEW_PATHS = ["/test-db/after-view/", "/api/v1/test-db/after-view/"]


def assert_no_debug_output(body: str) -> None:
    for leak in ("Traceback", "OperationalError", "database is locked", ".py"):
        assert leak not in body


@pytest.mark.parametrize("debug", [False, True])
def test_a_page_whose_database_is_locked_is_a_plain_503(settings, caplog, debug):
    settings.DEBUG = debug
    with caplog.at_level(logging.ERROR, logger="config.database_errors"):
        response = Client(raise_request_exception=False).get("/test-db/locked/")
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "try again in a few seconds" in body
    assert_no_debug_output(body)
    # The operator still gets the traceback.
    assert any(r.exc_info for r in caplog.records), caplog.text


@pytest.mark.parametrize("debug", [False, True])
def test_an_api_call_whose_database_is_locked_is_a_json_503(settings, debug):
    settings.DEBUG = debug
    response = Client(raise_request_exception=False).post(
        "/api/v1/test-db/locked/", {}, content_type="application/json"
    )
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert response.json() == {"detail": DETAIL}


@pytest.mark.parametrize("path", AFTER_VIEW_PATHS)
@pytest.mark.parametrize("debug", [False, True])
def test_a_middleware_whose_database_is_locked_is_a_503_too(settings, path, debug):
    """As a session saved after the view would fail, outside the view."""
    settings.DEBUG = debug
    middleware = list(settings.MIDDLEWARE)
    sessions = middleware.index("django.contrib.sessions.middleware.SessionMiddleware")
    middleware.insert(sessions + 1, AFTER_VIEW)
    settings.MIDDLEWARE = middleware
    response = Client(raise_request_exception=False).get(path)
    assert response.status_code == 503
    assert response["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert_no_debug_output(response.content.decode())


def test_any_other_error_is_still_a_500():
    response = Client(raise_request_exception=False).get("/test-db/broken/")
    assert response.status_code == 500
    assert "Retry-After" not in response
