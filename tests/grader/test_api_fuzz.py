"""Schemathesis throws schema-shaped and malformed requests at every endpoint:
whatever arrives, the answer is a clear 4xx or a success, never a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error


@pytest.fixture
def api_schema(db, learner, block_exercise):
    from django.core.signals import request_finished, request_started
    from django.core.wsgi import get_wsgi_application
    from django.db import close_old_connections

    # As Django's test client does: keep the test's transaction open across
    # requests instead of closing the connection after each one.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)

    yield schemathesis.openapi.from_wsgi("/api/v1/schema/", get_wsgi_application())
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def token(learner) -> str:
    from quiz.core.api.tokens import token_issue

    return token_issue(user=learner)[1]


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@hypothesis_settings(
    max_examples=30, deadline=None, suppress_health_check=list(HealthCheck)
)
def test_no_input_makes_the_api_fail_with_a_server_error(case, token):
    response = case.call(headers={"Authorization": f"Token {token}"})
    case.validate_response(response, checks=[not_a_server_error])
    assert response.status_code < 500
    if response.status_code >= 400:
        assert response.json().get("detail") or response.json(), response.text
