"""A JSON parser that refuses oversized or non-UTF-8 bodies with a clear 4xx."""

from __future__ import annotations

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from grader.api.errors import PayloadTooLarge


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The request body is over {limit:,} bytes.")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ParseError(
                f"The request body is not valid UTF-8 (byte {exc.start})."
            ) from None
        try:
            return json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise ParseError(f"The request body is not valid JSON: {exc}") from None
