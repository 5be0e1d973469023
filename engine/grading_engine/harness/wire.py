"""The bytes a child sends back: a JSON header, then a safetensors payload.

Layout::

    8 bytes   little-endian length N of the header
    N bytes   UTF-8 JSON header (the result meta, see below)
    rest      safetensors payload (possibly holding no tensors)

Everything here is read by the trusted parent from an untrusted process, so
`decode_result` checks every size and every JSON type and never unpickles:
tensors come only through `safetensors.torch.load`. What a hostile child can
make the parent allocate is bounded before anything is parsed: the JSON
header by its byte length (`MAX_HEADER_BYTES`) and nesting depth, the
tensors by the size their header declares (dtype x shape, summed against
`MAX_TENSOR_BYTES`) and their count.

Result meta, as written by `grading_engine.harness.child`::

    {"version": 1,
     "error": null | ERROR,                 # job-level: syntax, entry point
     "cases": [{"ok": true, "data": {...}}  # captured plain data
               | {"ok": false, "error": ERROR}, ...]}
    ERROR = {"type": str, "message": str, "line": int | null, "traceback": str}

Tensor names are namespaced per case: "c0/logits", "c3/grad_wte".
"""

from __future__ import annotations

import json
import math
import re

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

from grading_engine.json_nesting import json_nesting

VERSION = 1
_LEN_BYTES = 8
_MAX_DEPTH = 32  # captured data is shallow; deep nesting is an attack
_TENSOR_NAME = re.compile(r"c(\d+)/[A-Za-z0-9_.\-]{1,100}")
# Real results stay far below these; each bounds what decoding costs.
MAX_HEADER_BYTES = 1024 * 1024  # the JSON result meta
MAX_TENSOR_HEADER_BYTES = 1024 * 1024  # the safetensors header (names, shapes)
MAX_TENSORS = 4096
MAX_TENSOR_BYTES = 64 * 1024 * 1024  # sum of dtype size x numel
_MAX_RANK = 16
# The dtypes the child may send (grading_engine.checks.learner_calls._WIRE_DTYPES), by
# their safetensors names, with their size in bytes.
_ITEM_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
}


class WireError(ValueError):
    """The child's result is malformed, truncated, oversized or forged."""


def tensor_key(case_index: int, name: str) -> str:
    """Namespace a case's tensor so cases cannot overwrite each other."""
    key = f"c{case_index}/{name}"
    if not _TENSOR_NAME.fullmatch(key):
        raise ValueError(f"bad tensor name {name!r}")
    return key


def _plain(tensor: torch.Tensor) -> torch.Tensor:
    # safetensors refuses shared or non-contiguous storage and Parameter
    # subclasses; a detached contiguous clone on CPU is always storable.
    t = tensor.detach()
    if type(t) is not torch.Tensor:
        t = t.as_subclass(torch.Tensor)
    return t.to("cpu").contiguous().clone()


def encode_result(meta: dict, tensors: dict[str, torch.Tensor]) -> bytes:
    """Pack `meta` (JSON-able) and named tensors into one blob."""
    header = json.dumps(meta, ensure_ascii=False, allow_nan=True).encode("utf-8")
    payload = st_save({name: _plain(t) for name, t in tensors.items()})
    return len(header).to_bytes(_LEN_BYTES, "little") + header + payload


def decode_result(
    blob: bytes,
    *,
    max_bytes: int,
    max_header_bytes: int = MAX_HEADER_BYTES,
    max_tensor_bytes: int = MAX_TENSOR_BYTES,
) -> tuple[dict, dict[str, torch.Tensor]]:
    """Parse and validate a blob; raise WireError on anything unexpected.

    Every cap is checked before the part it guards is parsed, so a hostile
    result costs the parent about its own size, not a multiple of it.
    """
    if not isinstance(blob, (bytes, bytearray)):
        raise WireError(f"result is {type(blob).__name__}, not bytes")
    if len(blob) == 0:
        raise WireError("the child wrote no result")
    if len(blob) > max_bytes:
        raise WireError(f"result is {len(blob):,} bytes, over the {max_bytes:,} cap")
    if len(blob) < _LEN_BYTES:
        raise WireError(f"result is truncated ({len(blob)} bytes)")
    view = memoryview(blob)  # slices of a view copy nothing
    size = int.from_bytes(view[:_LEN_BYTES], "little")
    if size > max_header_bytes:
        raise WireError(
            f"result header is {size:,} bytes, over the {max_header_bytes:,} header cap"
        )
    if size > len(blob) - _LEN_BYTES:
        raise WireError(
            f"header claims {size:,} bytes but only "
            f"{len(blob) - _LEN_BYTES:,} follow (truncated or not a result)"
        )
    meta = _parse_header(bytes(view[_LEN_BYTES : _LEN_BYTES + size]))
    tensors = _parse_tensors(view[_LEN_BYTES + size :], max_tensor_bytes)
    _check_meta(meta)
    for name in tensors:
        match = _TENSOR_NAME.fullmatch(name)
        if match is None:
            raise WireError(f"tensor name {name[:80]!r} is not namespaced by case")
        if int(match.group(1)) >= len(meta["cases"]):
            raise WireError(f"tensor {name!r} belongs to no case")
    return meta, tensors


def _parse_header(raw: bytes) -> dict:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WireError(f"header is not UTF-8: {exc}") from None
    _check_nesting(raw)
    try:
        meta = json.loads(text)  # NaN/Infinity become floats, which is safe
    except (ValueError, RecursionError) as exc:
        raise WireError(f"header is not JSON: {str(exc)[:200]}") from None
    if not isinstance(meta, dict):
        raise WireError(f"header is a JSON {type(meta).__name__}, not an object")
    return meta


def _check_nesting(raw: bytes) -> None:
    """Refuse JSON nested deeper than _MAX_DEPTH before json.loads sees it."""
    if json_nesting(raw) > _MAX_DEPTH + 1:  # the meta object itself is level 0
        raise WireError(f"header nests deeper than {_MAX_DEPTH} levels")


def _parse_tensors(payload: memoryview, max_tensor_bytes: int) -> dict:
    if len(payload) < _LEN_BYTES:
        raise WireError("tensor payload is missing or truncated")
    declared = int.from_bytes(payload[:_LEN_BYTES], "little")
    if declared > MAX_TENSOR_HEADER_BYTES:
        raise WireError(
            f"tensor payload header is {declared:,} bytes, over the "
            f"{MAX_TENSOR_HEADER_BYTES:,} cap"
        )
    if declared > len(payload) - _LEN_BYTES:
        raise WireError("tensor payload header is truncated")
    _check_tensor_sizes(
        bytes(payload[_LEN_BYTES : _LEN_BYTES + declared]), max_tensor_bytes
    )
    try:
        tensors = st_load(bytes(payload))
    except Exception as exc:  # noqa: BLE001 - safetensors has its own types
        raise WireError(f"tensor payload is not safetensors: {exc}") from None
    return tensors


def _check_tensor_sizes(raw: bytes, max_tensor_bytes: int) -> None:
    """Check what the safetensors header declares before any tensor exists."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireError(
            f"tensor payload header is not JSON: {str(exc)[:200]}"
        ) from None
    if not isinstance(header, dict):
        raise WireError("tensor payload header is not a JSON object")
    entries = [(k, v) for k, v in header.items() if k != "__metadata__"]
    if len(entries) > MAX_TENSORS:
        raise WireError(f"{len(entries):,} tensors, over the {MAX_TENSORS:,} cap")
    total = 0
    for name, info in entries:
        where = f"tensor {name[:80]!r}"
        if not isinstance(info, dict):
            raise WireError(f"{where}: not described by an object")
        item = _ITEM_BYTES.get(info.get("dtype"))
        if item is None:
            raise WireError(f"{where}: dtype {str(info.get('dtype'))[:20]!r} refused")
        shape, offsets = info.get("shape"), info.get("data_offsets")
        if (
            not isinstance(shape, list)
            or len(shape) > _MAX_RANK
            or not all(type(n) is int and n >= 0 for n in shape)
        ):
            raise WireError(f"{where}: shape is not a list of sizes")
        if (
            not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(type(n) is int and n >= 0 for n in offsets)
        ):
            raise WireError(f"{where}: data_offsets is not a [begin, end] pair")
        size = math.prod(shape) * item
        if offsets[1] - offsets[0] != size:
            raise WireError(f"{where}: its shape and dtype do not match its data")
        total += size
        if total > max_tensor_bytes:
            raise WireError(
                f"tensors declare over {max_tensor_bytes:,} bytes, the tensor cap"
            )


def _check_error(error, where: str) -> None:
    if not isinstance(error, dict):
        raise WireError(f"{where}: error is not an object")
    for key in ("type", "message", "traceback"):
        if not isinstance(error.get(key), str):
            raise WireError(f"{where}: error.{key} is not a string")
    line = error.get("line")
    if line is not None and (type(line) is not int or line < 0):
        raise WireError(f"{where}: error.line is not a line number")


def _check_meta(meta: dict) -> None:
    if meta.get("version") != VERSION or type(meta.get("version")) is not int:
        raise WireError(f"unknown result version {meta.get('version')!r}")
    if meta.get("error") is not None:
        _check_error(meta["error"], "job")
    cases = meta.get("cases")
    if not isinstance(cases, list):
        raise WireError("cases is not a list")
    for i, record in enumerate(cases):
        if not isinstance(record, dict) or type(record.get("ok")) is not bool:
            raise WireError(f"case {i}: record has no boolean 'ok'")
        if record["ok"]:
            if not isinstance(record.get("data"), dict):
                raise WireError(f"case {i}: data is not an object")
        else:
            _check_error(record.get("error"), f"case {i}")
