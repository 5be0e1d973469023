"""The child harness, its wire format and the plain subprocess runner."""

from __future__ import annotations

import json
import os
import pickle
import textwrap

import pytest
import torch
from grading_engine.harness.child import execute_job
from grading_engine.harness.subprocess_runner import SubprocessRunner
from grading_engine.harness.wire import VERSION, WireError, decode_result, encode_result

MAX = 1 << 20
KV_CODE = textwrap.dedent(
    """\
    def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):
        return 2 * n_layer * n_embd * seq_len * batch_size * bytes_per_element
    """
)


def meta(cases=None, error=None) -> dict:
    return {"version": VERSION, "error": error, "cases": cases or []}


def ok(data=None) -> dict:
    return {"ok": True, "data": data or {}}


# -- wire ---------------------------------------------------------------------


def test_it_round_trips_meta_and_tensors():
    base = torch.arange(12.0).reshape(3, 4)
    tensors = {
        "c0/view": base.t(),  # non-contiguous
        "c0/same": base,  # shares storage with the view
        "c1/param": torch.nn.Parameter(torch.ones(2)),
        "c1/ids": torch.tensor([464, 6766, 318]),
    }
    sent = meta([ok({"x": 1, "nan": float("nan"), "s": "é🙂"}), ok()])
    got_meta, got = decode_result(encode_result(sent, tensors), max_bytes=MAX)

    assert got_meta["cases"][0]["data"]["x"] == 1
    assert got_meta["cases"][0]["data"]["nan"] != got_meta["cases"][0]["data"]["nan"]
    assert got_meta["cases"][0]["data"]["s"] == "é🙂"
    assert set(got) == set(tensors)
    for name, tensor in tensors.items():
        assert type(got[name]) is torch.Tensor
        assert torch.equal(got[name], tensor.detach())


def test_it_rejects_a_truncated_blob():
    blob = encode_result(meta([ok()]), {"c0/t": torch.ones(4)})
    for cut in (3, 12, len(blob) - 1):
        with pytest.raises(WireError):
            decode_result(blob[:cut], max_bytes=MAX)


def test_it_rejects_an_empty_result():
    with pytest.raises(WireError, match="no result"):
        decode_result(b"", max_bytes=MAX)


def test_it_rejects_an_oversized_blob():
    blob = encode_result(meta([ok()]), {"c0/t": torch.zeros(1000)})
    with pytest.raises(WireError, match="cap"):
        decode_result(blob, max_bytes=len(blob) - 1)


def test_it_rejects_trailing_bytes():
    blob = encode_result(meta([ok()]), {"c0/t": torch.ones(2)})
    with pytest.raises(WireError):
        decode_result(blob + b"forged", max_bytes=MAX)


def test_it_never_unpickles():
    class Boom:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    payload = pickle.dumps({"c0/t": Boom()})
    with pytest.raises(WireError):
        decode_result(payload, max_bytes=MAX)
    # A valid header followed by a pickle instead of safetensors.
    header = json.dumps(meta([ok()])).encode()
    blob = len(header).to_bytes(8, "little") + header + payload
    with pytest.raises(WireError, match="tensor payload"):
        decode_result(blob, max_bytes=MAX)


def _blob_with_header(header: bytes) -> bytes:
    from safetensors.torch import save

    return len(header).to_bytes(8, "little") + header + save({})


@pytest.mark.parametrize(
    "header",
    [
        b"[1, 2]",
        b'"a string"',
        b"{not json",
        b"\xff\xfe",
        json.dumps({"version": 2, "error": None, "cases": []}).encode(),
        json.dumps({"version": "1", "error": None, "cases": []}).encode(),
        json.dumps(meta() | {"cases": {"0": {}}}).encode(),
        json.dumps(meta([{"ok": 1, "data": {}}])).encode(),
        json.dumps(meta([{"ok": True, "data": [1]}])).encode(),
        json.dumps(meta([{"ok": False, "error": "boom"}])).encode(),
        json.dumps(
            meta(error={"type": "X", "message": "m", "line": "3", "traceback": ""})
        ).encode(),
        b'{"version": 1, "error": null, "cases": [' + b"[" * 100 + b"]" * 100 + b"]}",
    ],
    ids=[
        "list",
        "string",
        "not-json",
        "not-utf8",
        "version",
        "version-type",
        "cases-type",
        "ok-type",
        "data-type",
        "error-type",
        "line-type",
        "deep",
    ],
)
def test_it_rejects_bad_json_types(header):
    with pytest.raises(WireError):
        decode_result(_blob_with_header(header), max_bytes=MAX)


def test_it_rejects_tensors_outside_any_case():
    for name in ("logits", "c1/logits"):
        blob = encode_result(meta([ok()]), {name: torch.ones(1)})
        with pytest.raises(WireError, match="case"):
            decode_result(blob, max_bytes=MAX)


# -- child (in-process, benign code only) ---------------------------------------


def run_child(monkeypatch, code: str, entry_point: str = "kv_cache_bytes") -> dict:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # keep this process's threads
    job = {
        "code": code,
        "entry_point": entry_point,
        "harness": "kv-cache-bytes",
        "cases": [
            {
                "name": "one",
                "hidden": False,
                "args": {
                    "n_layer": 2,
                    "n_embd": 4,
                    "seq_len": 3,
                    "batch_size": 1,
                    "bytes_per_element": 2,
                },
            }
        ],
        "tiktoken_cache_dir": None,
    }
    read_fd, write_fd = os.pipe()
    execute_job(job, write_fd)
    with os.fdopen(read_fd, "rb") as stream:
        result, _ = decode_result(stream.read(), max_bytes=MAX)
    return result


def test_child_records_a_syntax_error_with_its_line(monkeypatch):
    result = run_child(monkeypatch, "x = 1\n\ndef kv_cache_bytes(:\n    pass\n")
    assert result["error"]["type"] == "SyntaxError"
    assert result["error"]["line"] == 3


def test_child_records_a_missing_entry_point(monkeypatch):
    result = run_child(monkeypatch, "def other():\n    return 1\n")
    assert result["error"]["type"] == "MissingEntryPoint"
    assert "define a function named kv_cache_bytes" in result["error"]["message"]


def test_child_says_when_the_entry_point_is_not_callable(monkeypatch):
    result = run_child(monkeypatch, "kv_cache_bytes = 42\n")
    assert "is a int, not a function" in result["error"]["message"]


def test_child_keeps_only_submission_frames(monkeypatch):
    code = "def helper(x):\n    return x.nope\n\ndef kv_cache_bytes(*args):\n"
    code += "    return helper(args)\n"
    result = run_child(monkeypatch, code)
    error = result["cases"][0]["error"]
    assert error["type"] == "AttributeError"
    assert error["line"] == 2
    assert "line 5, in kv_cache_bytes" in error["traceback"]
    assert "grading_engine" not in error["traceback"]  # no harness frames


def test_child_survives_exit_and_a_rigged_exception(monkeypatch):
    code = textwrap.dedent(
        """\
        class Nasty(Exception):
            def __str__(self):
                raise RuntimeError("no")

        def kv_cache_bytes(*args):
            raise Nasty()
        """
    )
    result = run_child(monkeypatch, code)
    assert result["cases"][0]["error"]["type"] == "Nasty"
    exits = run_child(monkeypatch, "import sys\nsys.exit(3)\n")
    assert exits["error"]["type"] == "SystemExit"
    assert exits["error"]["line"] == 2


def test_child_captures_a_correct_answer(monkeypatch):
    result = run_child(monkeypatch, KV_CODE)
    captured = result["cases"][0]["data"]["result"]
    assert captured["type"] == "builtins.int"
    assert captured["value"] == 2 * 2 * 4 * 3 * 1 * 2


def test_child_refuses_grader_imports_and_puts_the_modules_back(monkeypatch):
    import sys

    import grading_engine.reference

    code = textwrap.dedent(
        """\
        import sys

        def kv_cache_bytes(*args):
            try:
                sys.modules["grading_engine.exercises.kv_cache_bytes"]
            except KeyError:
                pass
            else:
                return -1
            from grading_engine.exercises.kv_cache_bytes import reference
            return reference(*args)
        """
    )
    error = run_child(monkeypatch, code)["cases"][0]["error"]
    assert error["type"] == "ImportError"
    assert error["message"] == (
        "grading_engine.exercises is not available to submissions: "
        "write the function yourself"
    )
    # In-process (as here), the grader's modules are back once the job is done.
    assert sys.modules["grading_engine.reference"] is grading_engine.reference
    assert "grading_engine.exercises.kv_cache_bytes" in sys.modules
    assert run_child(monkeypatch, KV_CODE)["cases"][0]["ok"]


# -- SubprocessRunner (real child processes) -------------------------------------


def job_for(code: str) -> dict:
    return {
        "code": code,
        "entry_point": "kv_cache_bytes",
        "harness": "kv-cache-bytes",
        "cases": [],
        "tiktoken_cache_dir": None,
    }


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.slow
def test_runner_returns_a_result_from_fd_3():
    outcome = SubprocessRunner().run(job_for(KV_CODE + "print('hello')\n"), timeout=60)
    assert outcome.exit_code == 0 and not outcome.timed_out
    assert outcome.stdout.strip() == "hello"
    result, _ = decode_result(outcome.result, max_bytes=MAX)
    assert result["error"] is None


@pytest.mark.slow
def test_runner_timeout_kills_the_whole_group():
    code = textwrap.dedent(
        """\
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print(child.pid, flush=True)
        while True:
            pass
        """
    )
    outcome = SubprocessRunner().run(job_for(code), timeout=8)
    assert outcome.timed_out
    assert outcome.killed_reason == "wall-clock limit"
    assert outcome.result == b""
    grandchild = int(outcome.stdout.split()[0])
    assert not _alive(grandchild)


@pytest.mark.slow
def test_runner_caps_output_and_says_so():
    code = "print('x' * 200_000)\n" + KV_CODE
    outcome = SubprocessRunner(output_cap=1000).run(job_for(code), timeout=60)
    assert outcome.stdout.startswith("x" * 1000)
    assert "truncated at 1,000 bytes" in outcome.stdout
    assert len(outcome.stdout) < 1100


@pytest.mark.slow
def test_runner_caps_the_result():
    outcome = SubprocessRunner(result_cap=50).run(job_for(KV_CODE), timeout=60)
    assert len(outcome.result) == 51  # one byte over: the decoder says oversized
    with pytest.raises(WireError):
        decode_result(outcome.result, max_bytes=50)


@pytest.mark.slow
def test_runner_passes_only_fd_3(tmp_path):
    secret = tmp_path / "parent-secret.txt"
    secret.write_text("s3cret")
    leaked = os.open(secret, os.O_RDONLY)
    os.set_inheritable(leaked, True)  # even an inheritable fd must not leak
    code = textwrap.dedent(
        """\
        import json, os
        fds = {}
        for name in os.listdir("/proc/self/fd"):
            try:
                fds[name] = os.readlink(f"/proc/self/fd/{name}")
            except OSError:
                pass
        print(json.dumps(fds))
        """
    )
    try:
        outcome = SubprocessRunner().run(job_for(code), timeout=60)
    finally:
        os.close(leaked)
    fds = json.loads(outcome.stdout)
    assert fds["3"].startswith("pipe:")
    assert all(not target.endswith("parent-secret.txt") for target in fds.values())
    inherited_pipes = {fd for fd, target in fds.items() if target.startswith("pipe:")}
    assert inherited_pipes == {"0", "1", "2", "3"}


@pytest.mark.slow
def test_runner_scrubs_the_environment(monkeypatch):
    monkeypatch.setenv("GRADER_TEST_SECRET", "s3cret-value")
    code = "import json, os\nprint(json.dumps(dict(os.environ)))\n"
    outcome = SubprocessRunner().run(job_for(code), timeout=60)
    env = json.loads(outcome.stdout)
    assert "GRADER_TEST_SECRET" not in env
    assert "s3cret-value" not in outcome.stdout
    assert env["OMP_NUM_THREADS"] == "1"
    assert env["HOME"] != os.environ.get("HOME")
    allowed = {
        "PATH",
        "HOME",
        "TMPDIR",
        "LANG",
        "PYTHONPATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONNOUSERSITE",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "TIKTOKEN_CACHE_DIR",
        "LC_CTYPE",  # set by Python itself for the C.UTF-8 locale
    }
    assert set(env) <= allowed


@pytest.mark.slow
def test_runner_reports_a_crash_without_result():
    code = "import os\nos.kill(os.getpid(), 9)\n"
    outcome = SubprocessRunner().run(job_for(code), timeout=60)
    assert outcome.exit_code == -9
    assert outcome.result == b""
