"""Float answers: capture one in the child, judge it in the parent.

A float is right within a relative tolerance, and a wrong one is named
only when exactly one slip of the exercise's table predicts it (the rule
exact ints follow too) and the value is much closer to that slip than to
the answer (fingerprints.distinct_match): two slips that give the same
number leave the learner with "wrong", not with a guess.
"""

from __future__ import annotations

import math

from grading_engine.checks.fingerprints import distinct_match
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.slip_rules import ruled_out
from grading_engine.harness.capture import plain_float, safe_repr, type_name

# (value a known mistake gives, diagnosis, hint): what exercises pass in.
Slips = list[tuple[float, str, str]]


def capture_float(result, *, ints: bool = True) -> dict:
    """Child side: the result's type, and its value if it is a real number.

    A float, a numpy scalar or a 0-d tensor counts (plain_float); a bool,
    a bigger tensor or anything else arrives as a type with no value, and
    `ints=False` refuses integer numbers too.
    """
    return {
        "type": type_name(result),
        "value": plain_float(result, ints=ints),
        "repr": safe_repr(result),
    }


def _not_a_float(name, data, expected, *, field, hint, hidden) -> CheckResult:
    shown = str(data.get("repr", "?"))[:200]
    kind = str(data.get("type", "?"))[:200]
    if kind.startswith(("torch.", "numpy.")):
        hint = "return one number: .item() of a single value, or float(...)"
    return fail(
        name,
        f"expected a float, got {shown} of type {kind}: {hint}",
        expected=f"{expected:{field}}",
        got=f"{shown} ({kind})",
        diagnosis="not-a-float",
        hidden=hidden,
    )


def float_close(
    name: str,
    data: dict,
    expected: float,
    slips: Slips,
    *,
    rel_tol: float,
    spec: str = ",.4f",
    unit: str = "",
    float_hint: str | None = None,
    hidden: bool = False,
) -> CheckResult:
    """Compare a `capture_float` record; name the one slip it matches, if any.

    `spec` formats the numbers in the message (the expected/got fields drop
    its thousands separator), `unit` follows them, and `float_hint` tells a
    learner who returned something else what to return (by default: the
    unit as a float).
    """
    field = spec.replace(",", "")
    after = f" {unit}" if unit else ""
    if float_hint is None:
        float_hint = f"return the {unit} as a float" if unit else "return a float"
    value = data.get("value")
    if type(value) is not float or not math.isfinite(value):
        return _not_a_float(
            name, data, expected, field=field, hint=float_hint, hidden=hidden
        )
    if math.isclose(value, expected, rel_tol=rel_tol):
        return CheckResult(name, True, f"{value:{spec}}{after} is right", hidden=hidden)
    message = f"expected {expected:{spec}}{after}, got {value:{spec}}"
    matches = {  # by name: rows of one slip are one slip
        slip: hint
        for wrong, slip, hint in slips
        if math.isclose(value, wrong, rel_tol=rel_tol)
        and not ruled_out(slip)
        and distinct_match(
            abs(value - wrong), abs(wrong - expected), abs(value - expected)
        )
    }
    diagnosis = None
    if len(matches) == 1:
        diagnosis, hint = next(iter(matches.items()))
        message += f": {hint}"
    return fail(
        name,
        message,
        expected=f"{expected:{field}}",
        got=f"{value:{field}}",
        diagnosis=diagnosis,
        hidden=hidden,
    )
