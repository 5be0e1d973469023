"""A JSON parser that refuses oversized, non-UTF-8 or too deep bodies with a 4xx."""

from __future__ import annotations

import json

from django.conf import settings
from grading_engine.json_nesting import json_nesting
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from quiz.core.api.errors import PayloadTooLarge

# No request of this API nests more than a few levels; json.loads itself
# recurses per level and raises RecursionError near Python's limit. The
# bracket count is the engine's, the same one its result header goes through.
MAX_DEPTH = 32


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
        if json_nesting(raw) > MAX_DEPTH:  # before json.loads can recurse
            raise ParseError(
                f"The request body nests JSON deeper than {MAX_DEPTH} levels."
            )
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"The request body is not valid JSON: {exc}") from None
