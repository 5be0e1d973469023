"""The tool's side of LTI 1.3 security, on pylti1p3 through django-lti.

Only registered platforms and deployments an admin entered (and left
active) are accepted: django-lti would record an unknown deployment on the
fly, which here is a refused launch. pylti1p3 checks the state, the id_token's
signature against the platform's JWKS, `iss`, the client id in `aud`, `exp`,
the deployment and the message type's required claims; it only looks a
nonce up, so `nonce_consume` makes each one single-use, and it ignores `azp`,
so `audience_check` checks it as the spec recommends. A kid the cached JWKS
lacks refetches it once (lms.platform_keys). Calls to the LMS get a timeout
(requests has none by default).
"""

from __future__ import annotations

import jwt
import requests
from django.conf import settings
from django.db import IntegrityError, transaction
from lti_tool.models import Key, LtiDeployment, LtiRegistration
from lti_tool.utils import DjangoToolConfig
from pylti1p3.contrib.django import DjangoCacheDataStorage, DjangoMessageLaunch
from pylti1p3.deployment import Deployment
from pylti1p3.exception import LtiException

from lms.models import UsedNonce
from lms.platform_keys import JWKS_CACHE_SECONDS, KeyRefetchingLaunch

USER_AGENT = "gpt2-course-lti/1"


class LaunchRefused(Exception):
    """A launch or login the tool will not accept; `message` is for the user."""

    def __init__(self, message: str, *, status: int = 400, detail: str = ""):
        super().__init__(message)
        self.message = message
        self.status = status
        self.detail = detail


class ToolConfig(DjangoToolConfig):
    """django-lti's config, minus registering deployments it has never seen."""

    def find_registration_by_params(self, iss, client_id, *args, **kwargs):
        if client_id:
            return super().find_registration_by_params(iss, client_id, *args, **kwargs)
        # Some platforms leave client_id out of the login: one registration
        # for the issuer is unambiguous; several are not.
        found = list(LtiRegistration.objects.active().filter(issuer=iss)[:2])
        if len(found) != 1:
            return None
        self.registration = found[0]
        return self.registration.to_registration()

    def find_deployment(self, iss, deployment_id):
        return self._deployment(registration__issuer=iss, deployment_id=deployment_id)

    def find_deployment_by_params(self, iss, deployment_id, client_id, *args, **kwargs):
        return self._deployment(
            registration__issuer=iss,
            registration__client_id=client_id,
            deployment_id=deployment_id,
        )

    def _deployment(self, **lookups):
        found = LtiDeployment.objects.filter(
            registration__is_active=True, is_active=True, **lookups
        ).first()
        if found is None:
            return None
        self.deployment = found
        # pylti1p3's own value (django-lti builds it in a private helper).
        return Deployment().set_deployment_id(found.deployment_id)


class TimeoutSession(requests.Session):
    """A requests session whose calls give up after LMS_HTTP_TIMEOUT_SECONDS."""

    def __init__(self) -> None:
        super().__init__()
        self.headers["User-Agent"] = USER_AGENT

    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", settings.LMS_HTTP_TIMEOUT_SECONDS)
        return super().request(*args, **kwargs)


class LaunchStorage(DjangoCacheDataStorage):
    """pylti1p3's cache storage, never tied to a browser cookie.

    Over https pylti1p3 files launch data under a "session-id" cookie, which
    an LMS iframe with third-party cookies blocked never sends back: the
    deep-linking picker would fail there. Keys are random (nonces, launch
    ids), and a launch id is used once (lms.views), so the cookie adds little.
    """

    def get_session_cookie_name(self):
        return None


def storage() -> DjangoCacheDataStorage:
    return LaunchStorage()


def tool_key() -> Key:
    """The newest active signing key, made on first use (rotate: docs/lti.md)."""
    key = Key.objects.active().order_by("-datetime_created").first()
    if key is not None:
        return key
    # Two first uses at once make two keys: both are published, the newer signs.
    return Key.objects.generate()


# What pylti1p3 says, in words for the person who clicked the link.
_AGAIN = (
    "This launch did not start here, or took too long. "
    "Open the link in your course again."
)
_USED = "This launch was already used. Open the link in your course again."
_NOT_ISSUED = (
    "This launch's nonce is not one this tool issued (or it is too old). "
    "Open the link in your course again."
)
_FUTURE = (
    "The launch was issued in the future (its iat or nbf is ahead of this "
    "server's clock): the platform's clock or this server's is wrong."
)
_UNREGISTERED = (
    "This course platform (issuer and client id) is not registered with this tool."
)
_NO_DEPLOYMENT = (
    "This deployment of the tool is not registered or not active here. "
    "Ask an administrator to add its deployment id."
)
_CLAIMS = "The launch is missing required information (claims)."
_MESSAGES = (
    ("State not found", _AGAIN),
    ("Missing state", _AGAIN),
    ("Invalid Nonce", _NOT_ISSUED),
    ('"nonce" is empty', "The launch is missing its nonce."),
    ("Registration not found", _UNREGISTERED),
    ("Could not find registration", _UNREGISTERED),
    ("Client id not registered", _UNREGISTERED),
    ("Unable to find deployment", _NO_DEPLOYMENT),
    ("deployment_id is not set", "The launch names no deployment."),
    ("is missing the", _CLAIMS),
    ("Must have a user", _CLAIMS),
    ("Missing Roles", _CLAIMS),
    ("Missing Resource Link", _CLAIMS),
    ("Missing Deep Linking", _CLAIMS),
    ("Incorrect version", "Only LTI 1.3.0 launches are supported."),
    ("Signature has expired", "The launch has expired. Open the link in your course again."),  # noqa: E501
    ("The token is not yet valid", _FUTURE),
    ("must be an integer", "The launch's times (iat, exp, nbf) are not numbers."),
    ("Can't decode id_token", "The launch's signature does not match the platform's keys."),  # noqa: E501
    ("Unable to find public key", "The launch is signed with a key the platform does not publish (checked again with the platform if it did not just now)."),  # noqa: E501
    ("Error during fetch URL", "The platform's keys could not be fetched; try again in a moment."),  # noqa: E501
    ("Missing id_token", "The launch carries no id_token."),
    ("Invalid id_token", "The launch's id_token is malformed."),
    ("Invalid JWT format", "The launch's id_token is malformed."),
    ("Message validation failed", _CLAIMS),
    ("Unrecognized message type", "This kind of LTI message is not supported."),
    ("Invalid message type", "The launch names no LTI message type."),
    ('"iss" is empty', "The launch names no issuer."),
)  # fmt: skip


def refusal(exc: Exception) -> LaunchRefused:
    text = str(exc)
    for needle, message in _MESSAGES:
        if needle in text:
            return LaunchRefused(message, detail=text)
    return LaunchRefused("This launch could not be verified.", detail=text)


def launch_validate(request) -> DjangoMessageLaunch:
    """The verified launch in `request`, its nonce now spent; or LaunchRefused."""
    tool_key()  # a registration signs with it; the first launch may come first
    message_launch = KeyRefetchingLaunch(
        request,
        ToolConfig(),
        launch_data_storage=storage(),
        requests_session=TimeoutSession(),
    )
    message_launch.set_public_key_caching(storage(), JWKS_CACHE_SECONDS)
    # pylti1p3 matches `aud` to the registration's client id itself; PyJWT
    # checks the signature and `exp`, and here refuses a token without them.
    message_launch.set_jwt_verify_options(
        {"verify_aud": False, "require": ["exp", "iat"]}
    )
    try:
        message_launch.validate()
    except LtiException as exc:
        if "Invalid Nonce" in str(exc) and _nonce_used(request):
            raise LaunchRefused(_USED, detail=str(exc)) from exc
        raise refusal(exc) from exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise refusal(LtiException("Message validation failed")) from exc
    audience_check(
        message_launch.get_launch_data(),
        client_id=message_launch.get_tool_conf().registration.client_id,
    )
    nonce_consume(message_launch)
    return message_launch


def _nonce_used(request) -> bool:
    """Whether the (not yet verified) token's nonce signed someone in before:
    pylti1p3 forgets a nonce it issued after a while; this tool does not."""
    try:
        claims = jwt.decode(
            request.POST.get("id_token", ""), options={"verify_signature": False}
        )
    except jwt.InvalidTokenError:
        return False
    nonce = str(claims.get("nonce") or "")[:255]
    return bool(nonce) and UsedNonce.objects.filter(nonce=nonce).exists()


def audience_check(claims: dict, *, client_id: str) -> None:
    """`azp`, as LTI 1.3 (OIDC Core 3.1.3.7) recommends: when present it must
    be this tool's client id, and a token for several audiences must name it."""
    aud = claims.get("aud")
    audiences = aud if isinstance(aud, list) else [aud]
    azp = claims.get("azp")
    if azp is None:
        if len(audiences) > 1:
            raise LaunchRefused(
                "The launch is meant for several audiences (aud) but names no "
                "authorized party (azp), so it cannot be known to be for this tool."
            )
        return
    if str(azp) != str(client_id):
        raise LaunchRefused(
            "The launch's authorized party (azp) is another tool: it was not "
            "issued for this tool's client id."
        )


def nonce_consume(message_launch) -> None:
    registration = message_launch.get_tool_conf().registration
    nonce = str(message_launch.get_launch_data().get("nonce", ""))[:255]
    try:
        with transaction.atomic():
            UsedNonce.objects.create(registration=registration, nonce=nonce)
    except IntegrityError:
        raise LaunchRefused(_USED) from None


def launch_restore(request, launch_id: str) -> DjangoMessageLaunch | None:
    """A launch verified earlier, by its id (deep linking's second step)."""
    if not launch_id or not launch_id.startswith("lti1p3-launch-"):
        return None
    tool_key()
    try:
        return DjangoMessageLaunch.from_cache(
            launch_id,
            request,
            ToolConfig(),
            launch_data_storage=storage(),
            requests_session=TimeoutSession(),
        )
    except LtiException:
        return None
