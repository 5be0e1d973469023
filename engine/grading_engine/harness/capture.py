"""Turn what a learner's function returned into plain, JSON-able facts.

Used by `run_case` in the child. The parent never sees the learner's objects,
only these records: a type name, a repr, and a plain Python value when the
object is what the prompt asked for, so a rigged `__eq__` never reaches a
comparison.

Form leniency: what a prompt's words allow is accepted. "An int" is any
integer number: an int (or an int subclass, read through `int.__int__`, so
its own `__eq__`/`__int__` play no part), a numpy integer or a 0-d integer
tensor, but not a bool or a float. "A float" is any real number: a float, a
numpy scalar, a 0-d tensor, and an int unless the exercise says otherwise.
"A tuple of n" is any list or tuple of n items (a namedtuple included) or a
1-d array of n; "a list of ids" a list or a tuple. An exercise whose prompt
really needs one exact type says so and checks the recorded `type` itself.
"""

from __future__ import annotations

import torch

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


def _module_of(value) -> str:
    try:
        return str(type(value).__module__)
    except BaseException:  # noqa: BLE001
        return ""


def _scalar_tensor(value):
    """A 0-d torch tensor's plain Python number, else None."""
    if not isinstance(value, torch.Tensor):
        return None
    try:
        if value.dim() != 0 or value.is_complex() or value.dtype == torch.bool:
            return None
        return torch.Tensor.item(value.detach())
    except BaseException:  # noqa: BLE001 - meta tensors, odd subclasses
        return None


def plain_int(value) -> int | None:
    """`value` as a plain int if it is an integer number (see the module
    doc), else None. Bools and floats are not integers here."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, int):
            got = int.__int__(value)  # the stored value, not a rigged __int__
        elif _module_of(value) == "numpy":
            import numpy as np

            if not isinstance(value, np.integer):
                return None
            got = int(np.ndarray.item(np.asarray(value)))
        else:
            got = _scalar_tensor(value)
    except BaseException:  # noqa: BLE001
        return None
    if type(got) is not int or got.bit_length() > _MAX_INT_BITS:
        return None
    return got


def plain_float(value, *, ints: bool = True) -> float | None:
    """`value` as a plain float if it is a real number (see the module doc).

    `ints=False` refuses integer numbers, for answers where an int means a
    mistake (an integer division).
    """
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, float):
            got = float.__float__(value)
        elif isinstance(value, int):
            got = float(int.__int__(value)) if ints else None
        elif _module_of(value) == "numpy":
            import numpy as np

            if isinstance(value, np.integer) and not ints:
                return None
            if not isinstance(value, (np.integer, np.floating)):
                return None
            got = float(np.ndarray.item(np.asarray(value)))
        else:
            item = _scalar_tensor(value)
            if isinstance(item, int) and not ints:
                return None
            got = None if item is None else float(item)
    except BaseException:  # noqa: BLE001 - huge ints, rigged conversions
        return None
    return got if type(got) is float else None


def capture_int(value) -> dict:
    """Record `value` with its type; the value only if it is an integer
    number (plain_int), so the parent compares plain ints and names whatever
    else came back."""
    return {
        "type": type_name(value),
        "value": plain_int(value),
        "repr": safe_repr(value),
    }


def as_items(
    value, length: int | None = None, *, limit: int = 10_000, arrays: bool = True
) -> tuple[list, int] | None:
    """(the first `limit` items, the length) of a list, a tuple (a
    namedtuple too) or (unless `arrays=False`) a 1-d array or tensor; None
    for anything else or, with `length`, for a sequence of another length.

    Where a prompt asks for "a tuple of three ints", the tuple is the shape
    of the answer, not a type to match.
    """
    try:
        if isinstance(value, (list, tuple)):
            size, items = len(value), list(value[:limit])
        elif arrays and (
            _module_of(value) == "numpy" or isinstance(value, torch.Tensor)
        ):
            if value.ndim != 1:
                return None
            size, items = len(value), value[:limit].tolist()
        else:
            return None
    except BaseException:  # noqa: BLE001
        return None
    if type(size) is not int or type(items) is not list:
        return None
    if length is not None and size != length:
        return None
    return items, size


def capture_int_list(value, *, max_items: int = 10_000) -> dict:
    """Record a list of ints item by item (e.g. token ids); a tuple counts
    as one. A tensor or an array does not: a prompt that asks for a list of
    ids says "a Python list", and an exercise that takes a tensor of ids
    too converts it itself (nearest-tokens)."""
    found = as_items(value, limit=max_items, arrays=False)
    if found is None:
        return {"type": type_name(value), "items": None, "repr": safe_repr(value)}
    items, size = found
    return {
        "type": type_name(value),
        "items": [capture_int(item) for item in items],
        "length": size,
        "repr": safe_repr(value),
    }
