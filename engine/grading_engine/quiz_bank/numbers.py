"""A number as a person writes it, and whether it is within a tolerance.

124439808, 124,439,808, 124 439 808, 1.244e8, 124.4M and 0.5 are all
numbers; parsing goes through Decimal, so 124.439808M is exactly
124,439,808 and the tolerance decides the rest, not float rounding.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# Suffixes of counts and sizes: k thousand, M million, B or G billion,
# T trillion (either case: nobody means milli-parameters).
_SCALE = {"k": 3, "m": 6, "b": 9, "g": 9, "t": 12}
_NUMBER = re.compile(
    r"^(?P<sign>[+-]?)(?P<digits>\d{1,3}(?:[,_ ]\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)"
    r"(?:e(?P<exp>[+-]?\d{1,3}))?\s*(?P<suffix>[kmbgt])?$",
    re.IGNORECASE | re.ASCII,  # ASCII digits: what the hint and the keys show
)
MAX_LENGTH = 64
# How a learner may write a number, shown wherever one is asked for: an
# example no question asks (tests/quiz_bank/test_bank_grid.py checks), so
# the hint is never a key. 1.23M is the same number rounded, as people write.
EXAMPLE_FORMS = "1234567, 1,234,567, 1.234567e6 or 1.23M"


class NotANumber(ValueError):
    """Text that is not a number a person would write; the message says why."""


def parse_number(text: str) -> Decimal:
    """`text` as an exact Decimal, or NotANumber with a message for the learner."""
    raw = str(text).strip().replace("\u2212", "-")
    if not raw:
        raise NotANumber("Enter a number.")
    if len(raw) > MAX_LENGTH:
        raise NotANumber(f"That is longer than {MAX_LENGTH} characters.")
    match = _NUMBER.match(raw)
    if not match:
        raise NotANumber(f"{raw!r} is not a number: write it as {EXAMPLE_FORMS}.")
    digits = re.sub(r"[,_ ]", "", match["digits"])
    try:
        value = Decimal(match["sign"] + digits)
    except InvalidOperation:  # pragma: no cover - the pattern admits only digits
        raise NotANumber(f"{raw!r} is not a number.") from None
    power = int(match["exp"] or 0) + _SCALE.get((match["suffix"] or "").lower(), 0)
    return value.scaleb(power)


def within(value: Decimal, key, absolute: float = 0.0, relative: float = 0.0) -> bool:
    """|value - key| <= max(absolute, relative * |key|), in exact decimals."""
    exact = Decimal(repr(key)) if isinstance(key, float) else Decimal(key)
    allowed = max(
        Decimal(repr(float(absolute))), Decimal(repr(float(relative))) * abs(exact)
    )
    return abs(value - exact) <= allowed
