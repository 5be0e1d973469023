"""How a score is written: one function for every page and export.

A score (0-1: an attempt's, a quiz's, an item's, an assignment's, a total)
is written as a percent with at most one decimal place and the % sign:
"62.5%", "50%", "33.3%", "100%". Points, where a page shows them, are
written with at most two decimal places: "2.5 of 4 points", "1 of 1 point".

Rounding is half away from zero, on the number as it is written (its
shortest decimal form, so a float stored as 0.12345 rounds as 12.345, to
12.3, and 0.1235 as 12.35, to 12.4, never by binary noise). The CSV exports
hold the same rounded percent as a number (`percent_value`), so a page and
a file never disagree. Templates use the `percent` and `points_of` filters
(quiz/templatetags/course.py), which call these functions.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

_TENTH = Decimal("0.1")
_HUNDREDTH = Decimal("0.01")


def _finite(value) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(number):
        return None
    # repr: the shortest form that reads back as the same float.
    return Decimal(repr(number))


def _plain(number: Decimal) -> str:
    """No trailing zeros, no exponent, never "-0"."""
    text = f"{number:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def percent_decimal(score) -> Decimal | None:
    """`score` (0-1) in percent, to one decimal place, half away from zero."""
    number = _finite(score)
    if number is None:
        return None
    # Decimal's ROUND_HALF_UP rounds a half away from zero (-0.05 -> -0.1).
    return (number * 100).quantize(_TENTH, rounding=ROUND_HALF_UP)


def percent_value(score) -> float | None:
    """The rounded percent as a number (62.5, 50.0): for CSVs and sorting."""
    value = percent_decimal(score)
    return None if value is None else float(value) + 0.0  # never -0.0


def percent_number(score) -> str:
    """The rounded percent without its sign ("62.5", "50"); "" for no score."""
    value = percent_decimal(score)
    return "" if value is None else _plain(value)


def percent_text(score) -> str:
    """The score as a page writes it: "62.5%", "50%"; "" for no score (None, NaN)."""
    number = percent_number(score)
    return f"{number}%" if number else ""


def points_number(points) -> str:
    """Points to two decimal places at most, half away from zero: "2.5", "4"."""
    number = _finite(points)
    if number is None:
        return ""
    return _plain(number.quantize(_HUNDREDTH, rounding=ROUND_HALF_UP))


def points_value(points) -> float | None:
    """Points as a number rounded as `points_number` (Canvas's CSV)."""
    number = points_number(points)
    return float(number) if number else None


def points_text(points, possible) -> str:
    """Points as a page writes them: "2.5 of 4 points", "1 of 1 point"; "" when
    either is missing."""
    got, most = points_number(points), points_number(possible)
    if not got or not most:
        return ""
    return f"{got} of {most} point{'' if most == '1' else 's'}"
