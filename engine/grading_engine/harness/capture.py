"""Turn what a learner's function returned into plain, JSON-able facts.

Used by `run_case` in the child. The parent never sees the learner's objects,
only these records, so a rigged `__eq__`, an int subclass or a numpy scalar
arrives as what it is: a type name and no value.
"""

from __future__ import annotations

_MAX_REPR = 200
_MAX_INT_BITS = 256  # any real answer is far smaller; keeps JSON small


def type_name(value) -> str:
    """`builtins.int`, `numpy.int64`, `__submission__.Fake`."""
    kind = type(value)
    try:
        return f"{kind.__module__}.{kind.__qualname__}"[:_MAX_REPR]
    except BaseException:  # noqa: BLE001 - a metaclass can rig these too
        return "<unknown type>"


def safe_repr(value) -> str:
    """repr() that survives a learner's rigged or huge `__repr__`."""
    if type(value) is int and value.bit_length() > _MAX_INT_BITS:
        return f"<int with {value.bit_length()} bits>"
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001
        return f"<{type_name(value)} whose repr raised>"
    if type(text) is not str:
        return f"<{type_name(value)}>"
    return text[:_MAX_REPR]


def capture_int(value) -> dict:
    """Record `value` with its exact type; the value only if it is an int.

    `type(x) is int` rejects bool, int subclasses and numpy integers, so the
    parent can compare plain ints and name whatever else came back.
    """
    exact = type(value) is int and value.bit_length() <= _MAX_INT_BITS
    return {
        "type": type_name(value),
        "value": value if exact else None,
        "repr": safe_repr(value),
    }


def capture_int_list(value, *, max_items: int = 10_000) -> dict:
    """Record a list of ints item by item (e.g. token ids)."""
    if type(value) is not list:
        return {"type": type_name(value), "items": None, "repr": safe_repr(value)}
    items = [capture_int(item) for item in value[:max_items]]
    return {
        "type": "builtins.list",
        "items": items,
        "length": len(value),
        "repr": safe_repr(value),
    }
