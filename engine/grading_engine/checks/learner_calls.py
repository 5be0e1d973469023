"""Child side of a tensor exercise: call the learner's function, capture what came back.

These run in the sandbox next to the learner's code and turn whatever the
function did (returned, raised) into plain data and wire-safe tensors; the
trusted parent judges them (grading_engine.checks.tensors).
"""

from __future__ import annotations

import traceback

import torch

SUBMISSION = "<submission>"  # the filename the harness compiles learner code as
_MAX_MESSAGE = 500

# dtypes safetensors can carry; anything else is reported by name only.
_WIRE_DTYPES = {
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
}


def safe_str(value) -> str:
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a learner's __str__ can raise
        return "<unprintable>"
    return text[:_MAX_MESSAGE] if isinstance(text, str) else "<unprintable>"


def call_learner(fn, *args, **kwargs):
    """Call the learner's function; return (value, None) or (None, error).

    Catching here (not in the harness) lets the parent attach a diagnosis to
    well-known errors, such as a matmul with a weight in the wrong
    orientation.
    """
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - SystemExit goes to the harness
        try:
            frames = [
                f
                for f in traceback.extract_tb(exc.__traceback__)
                if f.filename == SUBMISSION
            ]
        except Exception:  # noqa: BLE001
            frames = []
        return None, {
            "type": safe_str(type(exc).__name__),
            "message": safe_str(exc),
            "line": frames[-1].lineno if frames else None,
            "kinds": _builtin_kinds(exc),
        }


def _builtin_kinds(exc: BaseException) -> list[str]:
    """The built-in exception classes `exc` is an instance of, most specific
    first: a learner's `class TooLong(ValueError)` gives ["ValueError",
    "Exception", "BaseException"], so the parent can accept a subclass of
    the type a prompt names (see raised)."""
    try:
        return [
            kind.__name__
            for kind in type(exc).__mro__
            if kind.__module__ == "builtins" and issubclass(kind, BaseException)
        ][:12]
    except Exception:  # noqa: BLE001 - a rigged metaclass
        return []


def capture_tensor(value) -> tuple[dict, torch.Tensor | None]:
    """Describe a returned value; give back a wire-safe tensor if it is one."""
    kind = type(value)
    info = {"type": f"{kind.__module__}.{kind.__qualname__}"[:200]}
    if not isinstance(value, torch.Tensor):
        return info, None
    try:
        info["dtype"] = str(value.dtype)
        if value.dtype not in _WIRE_DTYPES or value.is_sparse:
            return info, None
        return info, value.detach().as_subclass(torch.Tensor).cpu().contiguous().clone()
    except Exception as exc:  # noqa: BLE001 - meta tensors, odd subclasses
        info["capture_error"] = safe_str(exc)
        return info, None


def run_and_capture(fn, *args, **kwargs) -> tuple[dict, dict]:
    """The usual run_case body: call, then capture the output as "output"."""
    value, error = call_learner(fn, *args, **kwargs)
    info, tensor = capture_tensor(value)
    return {"error": error, "output": info}, (
        {"output": tensor} if tensor is not None else {}
    )


def run_with_future(fn, args, future_args=None) -> tuple[dict, dict]:
    """run_and_capture, then, if a tensor came back, a second call on
    `future_args` (the inputs with their later positions changed), whose
    output becomes tensors["future"] for fingerprints.causal_property."""
    data, tensors = run_and_capture(fn, *args)
    if "output" in tensors and future_args is not None:
        value, _ = call_learner(fn, *future_args)
        tensor = capture_tensor(value)[1]
        if tensor is not None:
            tensors["future"] = tensor
    return data, tensors


def capture_parts(fn, args, keys: tuple[str, ...]) -> tuple[dict, dict]:
    """Call the learner; capture a returned tuple of tensors under `keys`.

    `data["length"]` is set only when the tuple has one part per key, and
    `data["kind"]` describes what came back, for the parent to name.
    """
    value, error = call_learner(fn, *args)
    data: dict = {"error": error, "kind": capture_tensor(value)[0]}
    tensors: dict = {}
    if isinstance(value, (tuple, list)) and len(value) == len(keys):
        data["length"] = len(keys)
        for key, item in zip(keys, value, strict=True):
            data[key], tensor = capture_tensor(item)
            if tensor is not None:
                tensors[key] = tensor
    return data, tensors
