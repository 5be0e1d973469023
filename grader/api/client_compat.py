"""The learner client and the server must grade with one engine version.

`course` sends its grading-engine version in ENGINE_HEADER with every call.
Every exercise and submission response names the server's version; a client
with another one is refused the exercise files its local checks would run
(409, with what to install) and warned on everything else, so `course
check` never claims the server's verdict with different checks.
"""

from __future__ import annotations

from django.conf import settings
from grading_engine import __version__ as ENGINE_VERSION

from grader.client_dist import install_command

ENGINE_HEADER = "X-Course-Engine"
WARNING_HEADER = "X-Course-Engine-Warning"


def install_hint(request) -> str:
    """How to install this server's client: the `pip install` of the wheels
    it serves at /client/ (never a checkout, which holds every solution)."""
    base = request.build_absolute_uri("/")
    command = install_command(base) or (
        f"the wheels {base}client/ lists, once the server has built them "
        "(`make client`)"
    )
    return (
        settings.COURSE_CLIENT_INSTALL.replace("{install}", command)
        .replace("{url}", base)
        .replace("{version}", ENGINE_VERSION)
    )


def engine_info(request) -> dict:
    return {"version": ENGINE_VERSION, "install": install_hint(request)}


def engine_mismatch(request) -> str | None:
    """What to tell a client whose engine differs from the server's, or None."""
    theirs = request.headers.get(ENGINE_HEADER)
    if theirs is None or theirs.strip() == ENGINE_VERSION:
        return None
    shown = theirs.strip()[:40] or "no version"
    return (
        f"This server grades with grading-engine {ENGINE_VERSION}; your "
        f"client has {shown}, so its local checks could differ from the "
        f"server's. Install the server's version: {install_hint(request)}"
    )


def engine_headers(request, response) -> None:
    """Name the server's engine on a response, and warn a mismatched client."""
    response[ENGINE_HEADER] = ENGINE_VERSION
    mismatch = engine_mismatch(request)
    if mismatch:
        response[WARNING_HEADER] = mismatch
