"""Brute-force protection for every password check (django-axes).

The HTML log-in, the admin's log-in and POST /api/v1/auth/token/ all call
django.contrib.auth.authenticate with the request, and django-axes records
each failure. Two limits apply within a sliding cool-off window:

- LOGIN_FAILURE_LIMIT failures for one username, from any IP (guessing one
  account's password from many machines);
- LOGIN_IP_FAILURE_LIMIT failures from one IP, over any usernames (one
  machine spraying passwords). It is higher because a classroom shares one
  address.

Once a limit is reached every attempt is refused, even with the right
password, until the window has passed. A successful log-in forgets that
username's failures only: were it to forget the IP's too, an attacker with
an account of their own could clear their IP's count between guesses.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone


class AxesBackendForRequests(AxesStandaloneBackend):
    """django-axes' backend, applied to log-ins that come with a request.

    Every web path (the log-in page, the admin, the token endpoint) passes
    its request. An authenticate() call without one (a management command,
    Django's test client.login()) is not a guess over the network, and is
    left to ModelBackend instead of raising.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def _limits() -> list[tuple[str, int]]:
    return [
        ("username", settings.LOGIN_FAILURE_LIMIT),
        ("ip_address", settings.LOGIN_IP_FAILURE_LIMIT),
    ]


def _unlock_time(request, credentials) -> datetime | None:
    """When the request's username and IP are both under their limits again,
    or None if they are now. Each attempt row (one username, IP and user
    agent) leaves the window cool-off after its latest failure."""
    window = get_cool_off(request)
    now = getattr(request, "axes_attempt_time", None) or timezone.now()
    recent = AccessAttempt.objects.filter(attempt_time__gte=now - window)
    values = {
        "username": get_client_username(request, credentials),
        "ip_address": getattr(request, "axes_ip_address", None),
    }
    unlock = None
    for field, limit in _limits():
        if values[field] is None:
            continue
        rows = list(
            recent.filter(**{field: values[field]})
            .order_by("attempt_time")
            .values_list("attempt_time", "failures_since_start")
        )
        total = sum(failures for _, failures in rows)
        for attempt_time, failures in rows:
            if total < limit:
                break
            total -= failures
            lifted = attempt_time + window
            unlock = lifted if unlock is None else max(unlock, lifted)
    return unlock


def username_failure_limit(request, credentials) -> int:
    """AXES_FAILURE_LIMIT, read at each check so settings overrides apply."""
    return settings.LOGIN_FAILURE_LIMIT


class TieredAxesHandler(AxesDatabaseHandler):
    """Axes' database handler with a per-username and a per-IP limit."""

    def get_failures(self, request, credentials=None) -> int:
        """Failures as Axes compares them to AXES_FAILURE_LIMIT (the username
        limit): an IP over its own limit counts as at the username limit."""
        window = get_cool_off(request)
        recent = AccessAttempt.objects.filter(
            attempt_time__gte=request.axes_attempt_time - window
        )
        username = get_client_username(request, credentials)
        by_username = 0
        if username is not None:
            by_username = recent.filter(username=username).aggregate(
                n=Sum("failures_since_start")
            )["n"]
        by_ip = recent.filter(ip_address=request.axes_ip_address).aggregate(
            n=Sum("failures_since_start")
        )["n"]
        if (by_ip or 0) >= settings.LOGIN_IP_FAILURE_LIMIT:
            return max(by_username or 0, settings.LOGIN_FAILURE_LIMIT)
        return by_username or 0

    def reset_user_attempts(self, request, credentials=None) -> int:
        """On success, forget this username's failures (see the module doc)."""
        username = get_client_username(request, credentials)
        if username is None:
            return 0
        count, _ = AccessAttempt.objects.filter(username=username).delete()
        return count


def login_is_locked(request) -> bool:
    """Whether Axes refused (or just locked) the authenticate() call on `request`."""
    return bool(getattr(request, "axes_locked_out", False))


def login_succeeded(request, user) -> None:
    """Forget the username's failures after a success that made no session
    (the API's token; a session log-in does this through user_logged_in)."""
    if not settings.AXES_RESET_ON_SUCCESS:
        return
    AxesProxyHandler.update_request(request)
    AxesProxyHandler.get_implementation().reset_user_attempts(
        request, {settings.AXES_USERNAME_FORM_FIELD: user.get_username()}
    )


def retry_after_seconds(request, credentials=None) -> int:
    """Seconds until a locked-out request may try again (at least 1)."""
    unlock = _unlock_time(request, credentials)
    if unlock is None:
        return 1
    return max(1, math.ceil((unlock - timezone.now()).total_seconds()))


def lockout_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return (
        "Too many failed log-in attempts for this account or from this network. "
        f"Log-in is blocked for about {minutes} {unit}, even with the right "
        "password; try again later."
    )


def lockout_response(request, original_response=None, credentials=None):
    """AXES_LOCKOUT_CALLABLE: 429 with Retry-After; JSON for the API, else a page."""
    seconds = retry_after_seconds(request, credentials)
    message = lockout_message(seconds)
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=429)
    else:
        response = render(
            request,
            "registration/locked_out.html",
            {"message": message, "retry_after": timedelta(seconds=seconds)},
            status=429,
        )
    response["Retry-After"] = str(seconds)
    return response
