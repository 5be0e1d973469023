"""Numbers as the lessons write them: 154.4 ± 0.1, 38,597,376.

One formatter for every number a learner reads (self-check answers and
tolerances, exercise feedback), so a float stored as 154.4 never shows as
"154.400000" and a count never as "38597376".
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

# A plain number written as text (what a check's expected/got often holds).
# Grouped ("1,234.50") or not ("1234.50"), as the grader's checks write them.
_PLAIN = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")


def _group(digits: str) -> str:
    """Thousands separators on the integer part of a plain decimal string."""
    sign = "-" if digits.startswith("-") else ""
    whole, _, frac = digits.lstrip("+-").partition(".")
    grouped = f"{int(whole):,}"
    return sign + grouped + (f".{frac}" if frac else "")


def format_number(value) -> str:
    """`value` with thousands separators and no trailing zeros.

    Floats use their shortest exact form (repr), so 154.4 stays 154.4 and
    0.1 stays 0.1; whole floats print as integers; very large or small ones
    keep repr's exponent (1e-05). Text that is not a plain number, booleans
    and None come back unchanged (as text).
    """
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float | Decimal):
        number = float(value)
        if not math.isfinite(number):
            return str(number)
        if number.is_integer() and abs(number) < 1e15:
            return f"{int(number):,}"
        text = repr(number)
        return text if "e" in text else _group(text)
    text = str(value)
    stripped = text.strip()
    if _PLAIN.match(stripped):
        stripped = stripped.replace(",", "")
        if "." in stripped:
            whole, frac = stripped.split(".")
            frac = frac.rstrip("0")
            stripped = whole + (f".{frac}" if frac else "")
        return _group(stripped.lstrip("+"))
    return text
