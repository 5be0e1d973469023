"""Make learner-controlled text storable in PostgreSQL.

PostgreSQL text and jsonb refuse NUL (U+0000), and a lone UTF-16 surrogate
(U+D800-U+DFFF, which Python strings can hold) cannot be encoded as UTF-8 at
all. Learner output and messages that quote it may hold either; one bad
character must not stop a verdict from being saved.
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def db_text_clean(value):
    """`value` with NUL and lone surrogates replaced by U+FFFD, recursively.

    Strings anywhere inside dicts (keys too), lists and tuples are cleaned;
    other values are returned unchanged. Two surrogate code points side by
    side are no valid UTF-8 either (UTF-8 encodes the pair's code point), so
    every surrogate is replaced.
    """
    if isinstance(value, str):
        return _UNSTORABLE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {db_text_clean(k): db_text_clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(db_text_clean(v) for v in value)
    return value
