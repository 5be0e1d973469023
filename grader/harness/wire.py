"""The bytes a child sends back: a JSON header, then a safetensors payload.

Layout::

    8 bytes   little-endian length N of the header
    N bytes   UTF-8 JSON header (the result meta, see below)
    rest      safetensors payload (possibly holding no tensors)

Everything here is read by the trusted parent from an untrusted process, so
`decode_result` checks every size and every JSON type and never unpickles:
tensors come only through `safetensors.torch.load`.

Result meta, as written by `grader.harness.child`::

    {"version": 1,
     "error": null | ERROR,                 # job-level: syntax, entry point
     "cases": [{"ok": true, "data": {...}}  # captured plain data
               | {"ok": false, "error": ERROR}, ...]}
    ERROR = {"type": str, "message": str, "line": int | null, "traceback": str}

Tensor names are namespaced per case: "c0/logits", "c3/grad_wte".
"""

from __future__ import annotations

import json
import re

import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

VERSION = 1
_LEN_BYTES = 8
_MAX_DEPTH = 32  # captured data is shallow; deep nesting is an attack
_TENSOR_NAME = re.compile(r"c(\d+)/[A-Za-z0-9_.\-]{1,100}")


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
    blob: bytes, *, max_bytes: int
) -> tuple[dict, dict[str, torch.Tensor]]:
    """Parse and validate a blob; raise WireError on anything unexpected."""
    if not isinstance(blob, (bytes, bytearray)):
        raise WireError(f"result is {type(blob).__name__}, not bytes")
    if len(blob) == 0:
        raise WireError("the child wrote no result")
    if len(blob) > max_bytes:
        raise WireError(f"result is {len(blob):,} bytes, over the {max_bytes:,} cap")
    if len(blob) < _LEN_BYTES:
        raise WireError(f"result is truncated ({len(blob)} bytes)")
    size = int.from_bytes(blob[:_LEN_BYTES], "little")
    if size > len(blob) - _LEN_BYTES:
        raise WireError(
            f"header claims {size:,} bytes but only "
            f"{len(blob) - _LEN_BYTES:,} follow (truncated or not a result)"
        )
    meta = _parse_header(bytes(blob[_LEN_BYTES : _LEN_BYTES + size]))
    tensors = _parse_tensors(bytes(blob[_LEN_BYTES + size :]))
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
    try:
        meta = json.loads(text)  # NaN/Infinity become floats, which is safe
    except (ValueError, RecursionError) as exc:
        raise WireError(f"header is not JSON: {str(exc)[:200]}") from None
    if not isinstance(meta, dict):
        raise WireError(f"header is a JSON {type(meta).__name__}, not an object")
    _check_depth(meta, 0)
    return meta


def _check_depth(value, depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise WireError(f"header nests deeper than {_MAX_DEPTH} levels")
    if isinstance(value, dict):
        for item in value.values():
            _check_depth(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_depth(item, depth + 1)


def _parse_tensors(payload: bytes) -> dict[str, torch.Tensor]:
    if len(payload) < _LEN_BYTES:
        raise WireError("tensor payload is missing or truncated")
    declared = int.from_bytes(payload[:_LEN_BYTES], "little")
    if declared > len(payload) - _LEN_BYTES:
        raise WireError("tensor payload header is truncated")
    try:
        tensors = st_load(payload)
    except Exception as exc:  # noqa: BLE001 - safetensors has its own types
        raise WireError(f"tensor payload is not safetensors: {exc}") from None
    return tensors


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
