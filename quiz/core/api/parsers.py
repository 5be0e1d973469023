"""A JSON parser that refuses oversized, non-UTF-8 or too deep bodies with a 4xx,
and values no view could use, naming where they are.

`json.loads` accepts more than standard JSON gives Python safely: NaN and
Infinity (and 1e999, which reads as Infinity), which the strict renderer
then cannot write back (a 500); integers past Python's digit limit
(4,300), which it refuses with a plain ValueError (a 500 before any view
ran); and a lone UTF-16 surrogate ("\\ud800"), which is not Unicode: the
database and the renderer cannot encode it (a 500 wherever it is echoed or
saved; DRF's CharField refuses one, but not an object's key, nor a value
of a DictField or a JSONField). All are refused here, before any view,
with a 400 shaped as a serializer's: the top-level field, and a message
naming the value's place in it: {"slots": ["slots[0].points is NaN, ..."]}.
"""

from __future__ import annotations

import json
import math
import re
import sys

from django.conf import settings
from grading_engine.json_nesting import json_nesting
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from quiz.core.api.errors import PayloadTooLarge

# No request of this API nests more than a few levels; json.loads itself
# recurses per level and raises RecursionError near Python's limit. The
# bracket count is the engine's, the same one its result header goes through.
MAX_DEPTH = 32
# A surrogate can only arrive as a \u escape (the body is strict UTF-8): a
# body without one needs no search. Pairs match too; the search tells them.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE = "a lone UTF-16 surrogate (\\ud800 to \\udfff), which is not Unicode"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KEY_SHOWN = 30  # characters of a key shown in a path


class _Refused:
    """A value left in its place by json.loads' hooks, so the error can say
    where it was."""

    __slots__ = ("what",)

    def __init__(self, what: str):
        self.what = what


def _loads(text: str, *, big_ints: bool) -> tuple[object, bool]:
    """The body parsed, and whether a hook refused a value in it."""
    refused = []

    def refuse(what: str) -> _Refused:
        refused.append(True)
        return _Refused(what)

    def constant(name: str) -> _Refused:
        return refuse(f"{name}, which JSON does not allow: send a finite number")

    def real(text: str):
        value = float(text)
        if math.isfinite(value):
            return value
        return refuse("a number too large for a float: send a finite number")

    def integer(text: str):
        try:
            return int(text)
        except ValueError:  # past the digit limit (json's own pattern: digits)
            digits = len(text.lstrip("-"))
            limit = sys.get_int_max_str_digits()
            return refuse(f"an integer of {digits:,} digits (at most {limit:,})")

    hooks = {"parse_constant": constant, "parse_float": real}
    if big_ints:  # only then: the default int() is C's, the hook Python's
        hooks["parse_int"] = integer
    data = json.loads(text, **hooks)
    return data, bool(refused)


def _parse(text: str) -> tuple[object, bool]:
    try:
        return _loads(text, big_ints=False)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer past the digit limit: parse again to find it
        return _loads(text, big_ints=True)


def _where(path: tuple) -> str:
    """A path as a person reads it: `slots[0].points`, `answers["x y"]`."""
    out = ""
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif _NAME.fullmatch(step) and len(step) <= _KEY_SHOWN:
            out += f".{step}" if out else step
        else:
            shown = step if len(step) <= _KEY_SHOWN else step[:_KEY_SHOWN] + "…"
            out += f"[{json.dumps(shown)}]"  # ASCII: a surrogate is escaped
    return out


def _first_refused(data) -> tuple[tuple, str] | None:
    """(path, what) of the first value no view can take, depth first."""
    stack = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _Refused):
            return path, node.what
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return path, f"text with {_LONE}"
        elif isinstance(node, dict):
            if any(_SURROGATE.search(key) for key in node):
                return path, f"an object with a key holding {_LONE}"
            stack.extend(reversed([(path + (k,), v) for k, v in node.items()]))
        elif isinstance(node, list):
            stack.extend(reversed([(path + (i,), v) for i, v in enumerate(node)]))
    return None


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
            data, refused = _parse(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"The request body is not valid JSON: {exc}") from None
        if refused or _ESCAPED_SURROGATE.search(text):
            found = _first_refused(data)
            if found is not None:
                path, what = found
                message = f"{_where(path) or 'The request body'} is {what}."
                top = path[0] if path else None
                if isinstance(top, str) and _NAME.fullmatch(top) and len(top) < 50:
                    raise ParseError({top: [message]})  # a serializer's shape
                raise ParseError(message)
        return data
