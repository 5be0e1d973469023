"""Registering a platform: the one function the admin command calls."""

from __future__ import annotations

from django.db import transaction
from lti_tool.models import LtiDeployment, LtiRegistration

from lms.tool import tool_key


class RegistrationError(ValueError):
    """The registration cannot be saved; the message says what to fix."""


def platform_register(
    *, name, issuer, client_id, auth_url, token_url, keyset_url,
    audience="", deployment_ids=(),
) -> tuple[LtiRegistration, list[str]]:  # fmt: skip
    """Create or update (issuer, client id) and activate its deployment ids."""
    fields = {"issuer": issuer, "client_id": client_id, "name": name}
    for label, value in fields.items():
        if not str(value or "").strip():
            raise RegistrationError(f"Give the platform's {label.replace('_', ' ')}.")
    ids = [str(d).strip() for d in deployment_ids if str(d).strip()]
    with transaction.atomic():
        registration, _ = LtiRegistration.objects.get_or_create(
            issuer=issuer.strip(),
            client_id=client_id.strip(),
            defaults={"name": name, "auth_url": auth_url, "token_url": token_url,
                      "keyset_url": keyset_url},
        )  # fmt: skip
        registration.name = name
        registration.auth_url = auth_url
        registration.token_url = token_url
        registration.keyset_url = keyset_url
        registration.audience = audience
        registration.is_active = True
        registration.full_clean()
        registration.save()
        added = []
        for deployment_id in ids:
            _, created = LtiDeployment.objects.update_or_create(
                registration=registration,
                deployment_id=deployment_id,
                defaults={"is_active": True},
            )
            if created:
                added.append(deployment_id)
    tool_key()
    return registration, added


def tool_urls(base_url: str) -> dict[str, str]:
    """What an LMS admin pastes into Canvas or Moodle (docs/lti.md)."""
    base = base_url.rstrip("/")
    return {
        "OIDC login (initiate login) URL": f"{base}/lti/login/",
        "Redirect / target link / launch URL": f"{base}/lti/launch/",
        "Deep linking URL": f"{base}/lti/launch/",
        "Public JWK set (keyset) URL": f"{base}/lti/jwks/",
        "Deep-link picker (opened by the launch)": f"{base}/lti/deep-link/",
    }
