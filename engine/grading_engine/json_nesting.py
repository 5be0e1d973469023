"""How deeply a JSON text nests, measured before anything parses it.

`json.loads` recurses per level and fails near Python's recursion limit, so
both trust boundaries (the sandbox's result header and the web API's request
bodies) count brackets first and refuse deep input with their own message.
"""

from __future__ import annotations

import itertools
import re

_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_nesting(raw: bytes) -> int:
    """Deepest container nesting of `raw` (a top-level object or list is 1).

    Brackets inside strings do not count; malformed text is left to
    json.loads to refuse. C-level passes only: a 1 MB text takes < 0.3 s.
    """
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)
