"""A database that is busy or away answers 503 with Retry-After, never a 500.

"database is locked" from SQLite, or a PostgreSQL that is restarting, is a
moment's wait, not a bug in the page: the learner gets a plain page (JSON
`{"detail": ...}` under /api/, as every API error) that says so, and the
operator gets the traceback in the log. DRF views re-raise what their
exception handler does not answer, so API views reach process_exception too.
An error in a middleware's own queries (a session saved after the view) never
reaches process_exception: got_request_exception marks the request, and the
500 it became is replaced on its way out, whatever DEBUG says.
"""

from __future__ import annotations

import logging
import sys

from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError
from django.dispatch import receiver
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
DETAIL = (
    "The database is busy or unavailable for a moment; nothing was changed. "
    "Please try again in a few seconds."
)
_MARK = "_database_unavailable"


def is_database_unavailable(exc: BaseException | None) -> bool:
    """Errors of the database's state (locked, gone, restarting), not of a query."""
    return isinstance(exc, OperationalError | InterfaceError)


def database_unavailable_response(request) -> HttpResponse:
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": DETAIL}, status=503)
    else:
        # Rendered without the request: its context would query the database.
        response = HttpResponse(render_to_string("503.html"), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    """Turns a database error into a 503 (see the module docstring)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if getattr(request, _MARK, False) and response.status_code >= 500:
            return database_unavailable_response(request)
        return response

    def process_exception(self, request, exception):
        if not is_database_unavailable(exception):
            return None
        log.error(
            "database unavailable during %s %s; answered 503",
            request.method,
            request.path,
            exc_info=exception,
        )
        return database_unavailable_response(request)


@receiver(got_request_exception, dispatch_uid="config.database_errors")
def _mark_database_unavailable(sender, request=None, **kwargs) -> None:
    """Remember that the 500 being made for `request` is a database error."""
    if request is not None and is_database_unavailable(sys.exc_info()[1]):
        setattr(request, _MARK, True)
