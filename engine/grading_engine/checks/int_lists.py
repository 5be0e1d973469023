"""Read a captured list of ints (token ids) and say what is wrong with its form.

The parent trusts nothing in a `capture_int_list` record: it may be no list
at all, be malformed, hold non-ints, or have been cut short by the capture.
"""

from __future__ import annotations

from dataclasses import dataclass

from grading_engine.checks.result import CheckResult
from grading_engine.checks.values import captured_int


@dataclass(frozen=True)
class IntList:
    """What the record holds; `values` is set only when it is a list of ints."""

    values: list[int] | None = None
    not_a_list: tuple | None = None  # (repr, type) of what came back instead
    unreadable: bool = False  # a record the capture cannot have written
    bad_item: dict | None = None  # the first item that is not a plain int
    complete: bool = True  # False when the capture cut the list short


def read_int_list(captured) -> IntList:
    if not isinstance(captured, dict) or captured.get("items") is None:
        kind = captured.get("type") if isinstance(captured, dict) else "?"
        shown = captured.get("repr") if isinstance(captured, dict) else "?"
        return IntList(not_a_list=(shown, kind))
    items = captured["items"]
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return IntList(unreadable=True)
    complete = captured.get("length") == len(items)
    bad = [i for i in items if captured_int(i) is None]
    if bad:
        return IntList(bad_item=bad[0], complete=complete)
    return IntList(values=[i["value"] for i in items], complete=complete)


def unreadable(name: str) -> CheckResult:
    """A record no honest capture writes (so it is not worth hiding)."""
    return CheckResult(name, False, "the grader could not read your list")
