"""The trusted parent bounds what a hostile result makes it allocate.

A child controls every byte of its result. Before these caps, a 63 MB JSON
header made of `{},` cost the grading process ~1.5 GB, and a safetensors
header listing hundreds of thousands of empty tensors ~20x its size. Now
each part is refused by its declared size before it is parsed, with a
verdict that names the limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from grading_engine.exercises.base import load_harness
from grading_engine.grading import judge
from grading_engine.harness.wire import (
    MAX_HEADER_BYTES,
    MAX_TENSOR_HEADER_BYTES,
    MAX_TENSORS,
    VERSION,
    WireError,
    decode_result,
    encode_result,
)
from grading_engine.runner import ChildOutcome
from safetensors.torch import save as st_save

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MAX = 64 * 1024 * 1024


def meta(n_cases: int = 1) -> dict:
    cases = [{"ok": True, "data": {}} for _ in range(n_cases)]
    return {"version": VERSION, "error": None, "cases": cases}


def with_header(header: bytes, payload: bytes | None = None) -> bytes:
    payload = st_save({}) if payload is None else payload
    return len(header).to_bytes(8, "little") + header + payload


def safetensors_payload(entries: dict, data: bytes = b"") -> bytes:
    """A hand-written safetensors payload (header padded to 8 bytes)."""
    raw = json.dumps(entries, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return len(raw).to_bytes(8, "little") + raw + data


def empty_tensors(n: int) -> dict:
    return {
        f"c0/t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}
        for i in range(n)
    }


# -- each cap, by itself -------------------------------------------------------


def test_a_header_over_its_cap_is_refused_before_parsing():
    body = json.dumps(meta()).encode()
    padded = body[:-1] + b" " * (MAX_HEADER_BYTES - len(body) + 1) + b"}"
    assert len(padded) == MAX_HEADER_BYTES + 1
    with pytest.raises(WireError, match="header cap"):
        decode_result(with_header(padded), max_bytes=MAX)
    # One byte less is within the cap and decodes (spaces are valid JSON).
    got, _ = decode_result(with_header(padded[:-2] + b"}"), max_bytes=MAX)
    assert got["cases"] == [{"ok": True, "data": {}}]


def test_nesting_is_bounded_but_brackets_in_strings_do_not_count():
    deep = {"version": VERSION, "error": None, "cases": [{"ok": True, "data": {}}]}
    node = deep["cases"][0]["data"]
    for _ in range(28):  # meta -> cases -> record -> data -> 28 more levels
        node["x"] = {}
        node = node["x"]
    node["s"] = "[[[[{{{{" * 1000
    decode_result(with_header(json.dumps(deep).encode()), max_bytes=MAX)

    too_deep = b'{"version": 1, "error": null, "cases": ' + b"[" * 40 + b"]" * 40
    with pytest.raises(WireError, match="nests deeper than"):
        decode_result(with_header(too_deep + b"}"), max_bytes=MAX)
    # Far past the recursion limit of json.loads: refused, not a crash.
    abyss = b'{"cases": ' + b"[" * 500_000 + b"]" * 500_000 + b"}"
    with pytest.raises(WireError, match="nests deeper than"):
        decode_result(with_header(abyss), max_bytes=MAX)


def test_a_tensor_header_over_its_cap_is_refused():
    n = MAX_TENSOR_HEADER_BYTES // 60 + 1  # ~70 bytes of JSON per entry
    payload = safetensors_payload(empty_tensors(n))
    assert len(payload) > MAX_TENSOR_HEADER_BYTES
    blob = with_header(json.dumps(meta()).encode(), payload)
    with pytest.raises(WireError, match="tensor payload header is .* over the"):
        decode_result(blob, max_bytes=MAX)


def test_too_many_tensors_are_refused():
    payload = safetensors_payload(empty_tensors(MAX_TENSORS + 1))
    assert len(payload) < MAX_TENSOR_HEADER_BYTES
    blob = with_header(json.dumps(meta()).encode(), payload)
    with pytest.raises(WireError, match=f"over the {MAX_TENSORS:,} cap"):
        decode_result(blob, max_bytes=MAX)
    # At the cap they decode.
    payload = safetensors_payload(empty_tensors(MAX_TENSORS))
    blob = with_header(json.dumps(meta()).encode(), payload)
    assert len(decode_result(blob, max_bytes=MAX)[1]) == MAX_TENSORS


def test_tensors_are_budgeted_by_their_declared_size():
    blob = encode_result(meta(), {"c0/a": torch.zeros(250), "c0/b": torch.zeros(10)})
    decode_result(blob, max_bytes=MAX, max_tensor_bytes=260 * 4)
    with pytest.raises(WireError, match="tensor cap"):
        decode_result(blob, max_bytes=MAX, max_tensor_bytes=260 * 4 - 1)


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]}, "refused"),
        ({"dtype": "F32", "shape": [2, -2], "data_offsets": [0, 16]}, "shape"),
        ({"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}, "shape"),
        ({"dtype": "F32", "shape": [1] * 17, "data_offsets": [0, 4]}, "shape"),
        ({"dtype": "F32", "shape": [10**12], "data_offsets": [0, 16]}, "match"),
        ({"dtype": "F32", "shape": [4], "data_offsets": [0]}, "data_offsets"),
        ("F32", "object"),
    ],
    ids=["dtype", "negative", "float", "rank", "huge", "offsets", "not-object"],
)
def test_a_forged_tensor_entry_is_refused_before_loading(entry, message):
    payload = safetensors_payload({"c0/t": entry}, b"\0" * 16)
    blob = with_header(json.dumps(meta()).encode(), payload)
    with pytest.raises(WireError, match=message):
        decode_result(blob, max_bytes=MAX)


def test_a_hostile_result_gets_a_verdict_naming_the_limit():
    module = load_harness("kv-cache-bytes")
    cases = module.make_cases(0)
    header = b'{"version":1,"error":null,"cases":[' + b"{}," * 400_000 + b"{}]}"
    outcome = ChildOutcome(
        exit_code=0,
        timed_out=False,
        stdout="",
        stderr="",
        result=with_header(header),
        duration_ms=1.0,
    )
    verdict = judge(module, cases, outcome, timeout=10)
    assert verdict.status == "error"
    assert verdict.score == 0.0
    assert "header cap" in verdict.checks[0].message


# -- what decoding costs the parent ---------------------------------------------

# Run in a fresh interpreter so the peak is this decode's alone. Linux resets
# a process's peak RSS (VmHWM) when "5" is written to /proc/self/clear_refs.
MEASURE = textwrap.dedent(
    """
    import json, sys
    from grading_engine.harness.wire import WireError, decode_result

    MAX = 64 * 1024 * 1024


    def status(key):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
        raise KeyError(key)


    def header_attack():
        # The reported attack: a 63 MB JSON header made of `{},`.
        n = (63 * 1024 * 1024) // 3
        header = b'{"version":1,"error":null,"cases":[' + b"{}," * n + b"{}]}"
        tail = b"\\x08" + b"\\0" * 7 + b"{}      "  # an empty safetensors
        return len(header).to_bytes(8, "little") + header + tail


    def tensor_attack():
        # 600,000 empty tensors: a 37 MB safetensors header.
        entries = ",".join(
            f'"c0/t{i}":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'
            for i in range(600_000)
        )
        raw = ("{" + entries + "}").encode()
        raw += b" " * (-len(raw) % 8)
        header = b'{"version":1,"error":null,"cases":[{"ok":true,"data":{}}]}'
        return (
            len(header).to_bytes(8, "little") + header
            + len(raw).to_bytes(8, "little") + raw
        )


    blob = {"header": header_attack, "tensors": tensor_attack}[sys.argv[1]]()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = status("VmRSS")
    try:
        decode_result(blob, max_bytes=MAX)
        error = None
    except WireError as exc:
        error = str(exc)
    print(json.dumps({
        "blob": len(blob), "extra": status("VmHWM") - before, "error": error,
    }))
    """
)


def decode_cost(attack: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, attack],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PROJECT_ROOT)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "attack, limit",
    [("header", "header cap"), ("tensors", "tensor payload header")],
)
def test_decoding_a_hostile_result_costs_far_less_than_its_size(attack, limit):
    # Uncapped, the header attack cost ~1,500 MB and the tensor one ~800 MB
    # (json.loads / safetensors building every object). Capped, the decoder
    # refuses both from their length fields: well under 40 MB, whatever the
    # allocator's noise.
    cost = decode_cost(attack)
    assert cost["blob"] > 30 * 1024 * 1024
    assert cost["error"] is not None and limit in cost["error"]
    assert cost["extra"] < 40 * 1024 * 1024, cost
