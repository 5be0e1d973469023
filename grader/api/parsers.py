"""A JSON parser that refuses oversized, non-UTF-8 or too deep bodies with a 4xx."""

from __future__ import annotations

import json

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from grader.api.errors import PayloadTooLarge

# No request of this API nests more than a few levels; json.loads itself
# raises RecursionError near Python's recursion limit (a 500 before this).
MAX_DEPTH = 32


class TooDeep(ValueError):
    pass


def json_depth_check(value, limit: int = MAX_DEPTH) -> None:
    """Raise TooDeep when containers nest deeper than `limit` (iteratively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        if depth > limit:
            raise TooDeep(f"The JSON nests deeper than {limit} levels.")
        stack.extend((child, depth + 1) for child in item)


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
        if not text.strip():
            return {}
        try:
            data = json.loads(text)
            json_depth_check(data)
        except json.JSONDecodeError as exc:
            raise ParseError(f"The request body is not valid JSON: {exc}") from None
        except (RecursionError, TooDeep):
            raise ParseError(
                f"The request body nests JSON deeper than {MAX_DEPTH} levels."
            ) from None
        return data
