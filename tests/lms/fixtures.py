"""Fixtures for LTI tests (a plugin of tests/conftest.py): an LMS
(tests/lms/platform.py) registered with a live tool server."""

from __future__ import annotations

import pytest
import requests

from tests.lms.platform import Platform


@pytest.fixture
def eager_celery():
    """Tasks run in this process, retries included (Celery's eager mode)."""
    from config.celery import app

    # The Django setting's name is the one Celery reads (namespace CELERY).
    before = app.conf["CELERY_TASK_ALWAYS_EAGER"]
    app.conf["CELERY_TASK_ALWAYS_EAGER"] = True
    yield
    app.conf["CELERY_TASK_ALWAYS_EAGER"] = before


@pytest.fixture
def platform(lms_platform, eager_celery):
    """The platform, with the tool's tasks run in this process."""
    return lms_platform


@pytest.fixture
def lms_platform(live_server):
    """A started platform, registered (with an active deployment) by an admin."""
    from lti_tool.models import LtiDeployment, LtiRegistration

    sim = Platform().start()
    sim.tool_jwks_url = live_server.url + "/lti/jwks/"
    registration = LtiRegistration.objects.create(
        name="Simulated LMS",
        issuer=sim.issuer,
        client_id=sim.client_id,
        auth_url=sim.auth_url,
        token_url=sim.token_url,
        keyset_url=sim.jwks_url,
    )
    LtiDeployment.objects.create(
        registration=registration, deployment_id=sim.deployment_id, is_active=True
    )
    yield sim
    sim.stop()


@pytest.fixture
def tool(live_server) -> str:
    return live_server.url


@pytest.fixture
def browser_session():
    with requests.Session() as session:
        yield session
