"""Ids and counts from query strings and URLs, parsed strictly.

`int()` and `str.isdigit()` accept more than ASCII digits: "²".isdigit() is
True but int("²") raises, and int("١٢") (Arabic-Indic) is 12. An id past
PostgreSQL's bigint cannot name a row. Both are bad input, never a 500.
"""

from __future__ import annotations

import re

BIGINT_MAX = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")  # ASCII only; \d would match "²" and "١"


class BadNumber(ValueError):
    """Not a whole number in range; the message is for the person who sent it."""


def whole_number(raw: str | None, *, minimum: int = 0, maximum: int = BIGINT_MAX):
    """`raw` as an int in [minimum, maximum]; None when absent or blank.

    Raises BadNumber for anything that is not ASCII digits in range.
    """
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str) or not _DIGITS.fullmatch(raw):
        raise BadNumber("Must be a whole number written with the digits 0-9.")
    value = int(raw)
    if not minimum <= value <= maximum:
        raise BadNumber(f"Must be a whole number from {minimum} to {maximum}.")
    return value


def id_in_range(value: int) -> bool:
    """True when `value` (from an <int:...> URL) can be a database id."""
    return 0 <= value <= BIGINT_MAX
