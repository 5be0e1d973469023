"""Admins register a platform: by command or in the admin, deployments active."""

from __future__ import annotations

import re

import pytest
from django.core.management import CommandError, call_command
from lti_tool.models import Key, LtiDeployment, LtiRegistration

pytestmark = pytest.mark.django_db

ARGS = [
    "--name", "Canvas test", "--issuer", "https://canvas.test.instructure.com",
    "--client-id", "10000000000042",
    "--login-url", "https://sso.test.canvaslms.com/api/lti/authorize_redirect",
    "--token-url", "https://sso.test.canvaslms.com/login/oauth2/token",
    "--jwks-url", "https://sso.test.canvaslms.com/api/lti/security/jwks",
    "--base-url", "https://course.example.org",
]  # fmt: skip


def test_the_command_registers_and_prints_what_to_paste(capsys):
    call_command("lti_register", *ARGS, "--deployment", "1:abc", "--deployment", "2:x")
    out = capsys.readouterr().out
    registration = LtiRegistration.objects.get()
    assert registration.client_id == "10000000000042" and registration.is_active
    assert sorted(
        LtiDeployment.objects.filter(is_active=True).values_list(
            "deployment_id", flat=True
        )
    ) == ["1:abc", "2:x"]
    assert "https://course.example.org/lti/login/" in out
    assert "https://course.example.org/lti/jwks/" in out
    assert Key.objects.filter(is_active=True).count() == 1  # ready to sign
    # Again: updated in place, the new deployment added, nothing doubled.
    call_command("lti_register", *ARGS, "--deployment", "3:y")
    assert LtiRegistration.objects.count() == 1
    assert LtiDeployment.objects.count() == 3


def test_the_command_refuses_a_bad_url():
    token_url = ARGS.index("--token-url") + 1
    bad = [*ARGS[:token_url], "not a url", *ARGS[token_url + 1 :]]
    with pytest.raises(CommandError, match="token_url|URL"):
        call_command("lti_register", *bad)
    assert not LtiRegistration.objects.exists()


def test_a_deployment_added_in_the_admin_starts_active(client, admin_user):
    client.force_login(admin_user)
    page = client.get("/admin/lti_tool/ltiregistration/add/")
    assert page.status_code == 200
    assert re.search(
        r'<input type="checkbox" name="deployments-0-is_active"[^>]* checked>',
        page.content.decode(),
    )
