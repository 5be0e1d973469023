"""API errors: always JSON with a `detail` a person can act on, never a 500 page."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

log = logging.getLogger(__name__)


@contextmanager
def service_errors_as_400(
    *errors: type[Exception], field: str | None = None
) -> Iterator[None]:
    """A service's refusal, raised in the block, answered as a 400.

    An exception of one of `errors` becomes a ValidationError naming the
    field to fix, `{field: [message]}`: `field` when given, else the
    exception's own `field`. Any other exception passes through, so a view
    maps the rest (a 409, a 403) around or inside the block.
    """
    try:
        yield
    except errors as exc:
        raise ValidationError({field or exc.field: [str(exc)]}) from None


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def exception_handler(exc, context):
    response = drf_exception_handler(exc, context)
    if response is not None:
        return response
    from django.core.exceptions import RequestDataTooBig

    if isinstance(exc, RequestDataTooBig):
        return Response(
            {"detail": "The request body is too large."},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    return None
