"""Rates like "30/min", parsed without Django so settings can check them."""

from __future__ import annotations

import re

PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600}
PERIODS |= {"d": 86400, "day": 86400}
UNITS = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}
RATE_FORMAT = re.compile(r"^\s*(\d+)\s*/\s*(s|sec|m|min|h|hour|d|day)\s*$")


def rate_parse(rate: str) -> tuple[int, int]:
    """ "30/min" -> (30, 60) (limit, period in seconds); ValueError otherwise."""
    match = RATE_FORMAT.match(rate or "")
    if not match or int(match[1]) < 1:
        raise ValueError(
            f"{rate!r} is not a rate like 30/min (a number, '/', and s, min, h or d)"
        )
    return int(match[1]), PERIODS[match[2]]


def rate_words(limit: int, period: int) -> str:
    return f"{limit} per {UNITS[period]}"
