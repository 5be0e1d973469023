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

ENGINE_HEADER = "X-Course-Engine"
WARNING_HEADER = "X-Course-Engine-Warning"


def install_hint() -> str:
    return settings.COURSE_CLIENT_INSTALL.replace("{version}", ENGINE_VERSION)


def engine_info() -> dict:
    return {"version": ENGINE_VERSION, "install": install_hint()}


def engine_mismatch(request) -> str | None:
    """What to tell a client whose engine differs from the server's, or None."""
    theirs = request.headers.get(ENGINE_HEADER)
    if theirs is None or theirs.strip() == ENGINE_VERSION:
        return None
    shown = theirs.strip()[:40] or "no version"
    return (
        f"This server grades with grading-engine {ENGINE_VERSION}; your "
        f"client has {shown}, so its local checks could differ from the "
        f"server's. Install the server's version: {install_hint()}"
    )


def engine_headers(request, response) -> None:
    """Name the server's engine on a response, and warn a mismatched client."""
    response[ENGINE_HEADER] = ENGINE_VERSION
    mismatch = engine_mismatch(request)
    if mismatch:
        response[WARNING_HEADER] = mismatch
