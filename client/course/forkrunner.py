"""A local runner that forks each check from a process with torch already loaded.

A fresh `python -m grading_engine.harness` per check spends about two
seconds importing torch before the learner's code runs, and a notebook runs
`%%check` again and again. So the client starts one small fork server
(`python -m course.forkrunner`) that imports torch and the engine's child
side once, builds an exercise's reference models the first time it is
checked (single-threaded, so forking stays safe), and forks one child per
check: its own session (killed whole at the deadline), its own
working directory, a scrubbed environment, output capped as the engine's
subprocess runner caps it. Where fork is missing (Windows), `runner()`
falls back to that subprocess runner.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grading_engine.harness.result_fd import RESULT_FD
from grading_engine.harness.subprocess_runner import child_environment, kill_group
from grading_engine.runner import ChildOutcome

OUTPUT_CAP = 64_000
RESULT_CAP = 64 * 1024 * 1024

_runner = None
_runner_lock = threading.Lock()


def runner():
    """This process's local runner (its fork server starts on first use)."""
    global _runner
    with _runner_lock:
        if _runner is None:
            if hasattr(os, "fork"):
                _runner = ForkRunner()
            else:
                from grading_engine.harness.subprocess_runner import SubprocessRunner

                _runner = SubprocessRunner()
        return _runner


# -- the fork server's side ---------------------------------------------------


def _child(workdir: str, env: dict) -> None:
    """In the forked child: wire the files to fds 0-3 and run the job."""
    os.setsid()  # its own process group, so the client can kill it whole
    os.chdir(workdir)
    files = {
        0: ("job.json", os.O_RDONLY),
        1: ("stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        2: ("stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        RESULT_FD: ("result", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    }
    for fd, (name, flags) in files.items():
        opened = os.open(os.path.join(workdir, name), flags, 0o600)
        if opened != fd:  # a free fd 3 is what open() hands out first
            os.dup2(opened, fd)
            os.close(opened)
    os.environ.clear()
    os.environ.update(env)
    code = 0
    try:
        from grading_engine.harness.__main__ import main

        main()  # reads the job on stdin, writes the result to fd 3
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported like a crash, on stderr
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(code)


def serve() -> None:
    """Read one request line at a time; fork; answer "pid", then "exit CODE"."""
    import grading_engine.harness.child  # loaded once, for every fork
    import torch

    # One thread, set before anything computes: no thread pool exists to be
    # broken by fork, and a job runs single-threaded, as the engine's runners.
    torch.set_num_threads(1)
    warmed: set[str] = set()
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        harness = request.get("harness")
        if isinstance(harness, str) and harness not in warmed:
            # An exercise's reference models, built once and shared by fork.
            grading_engine.harness.child.preload([harness])
            warmed.add(harness)
        pid = os.fork()
        if pid == 0:
            _child(request["workdir"], request["env"])
        print(pid, flush=True)
        _, status = os.waitpid(pid, 0)
        print(f"exit {os.waitstatus_to_exitcode(status)}", flush=True)


# -- the client's side ---------------------------------------------------------


def _read(path: Path, cap: int) -> tuple[bytes, bool]:
    try:
        with path.open("rb") as handle:
            data = handle.read(cap + 1)
    except FileNotFoundError:
        return b"", False
    return data[:cap], len(data) > cap


def _text(path: Path) -> str:
    data, truncated = _read(path, OUTPUT_CAP)
    text = data.decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[output truncated at {OUTPUT_CAP:,} bytes]"
    return text


class ForkRunner:
    """grading_engine.runner.Runner over the fork server; one job at a time."""

    def __init__(self):
        self.server: subprocess.Popen | None = None
        self.pending = b""  # bytes read from the server past its last line
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen:
        if self.server is None or self.server.poll() is not None:
            self.pending = b""
            self.server = subprocess.Popen(
                [sys.executable, "-m", "course.forkrunner"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,  # unbuffered: select() must see every byte not read
                start_new_session=True,
                env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
            )
            if self._line(None) != "ready":
                self.server.kill()
                raise RuntimeError("the local check process did not start")
        return self.server

    def _send(self, request: dict) -> None:
        line = (json.dumps(request) + "\n").encode()
        for attempt in (1, 2):
            try:
                server = self._start()
                server.stdin.write(line)
                server.stdin.flush()
                return
            except OSError:  # it died since the last job: start another once
                self._discard()
                if attempt == 2:
                    raise RuntimeError(
                        "the local check process did not start"
                    ) from None

    def _discard(self) -> None:
        if self.server is not None:
            self.server.kill()
            self.server.wait()
            self.server = None

    def _line(self, deadline: float | None) -> str | None:
        """The server's next line ("" if it died), or None at the deadline."""
        fd = self.server.stdout.fileno()
        while b"\n" not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return ""
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode().strip()

    def run(self, job: dict, *, timeout: float, **_ignored) -> ChildOutcome:
        with self.lock, tempfile.TemporaryDirectory(prefix="course-check-") as workdir:
            path = Path(workdir)
            (path / "job.json").write_text(json.dumps(job), encoding="utf-8")
            request = {
                "workdir": workdir,
                "env": child_environment(workdir, job),
                "harness": job.get("harness"),
            }
            self._send(request)
            pid = int(self._line(None) or 0)  # sent once the models are warm
            if not pid:
                self._discard()
                raise RuntimeError("the local check process stopped")
            start = time.monotonic()
            status = self._line(start + timeout)
            timed_out = status is None
            kill_group(pid)  # also reaps what the code left running
            if timed_out:
                status = self._line(None)
            if not status:  # the code killed the server: the next run starts one
                self._discard()
                raise RuntimeError("the local check process stopped")
            exit_code = int(status.split()[1])
            result, oversized = _read(path / "result", RESULT_CAP)
            return ChildOutcome(
                exit_code=exit_code,
                timed_out=timed_out,
                stdout=_text(path / "stdout"),
                stderr=_text(path / "stderr"),
                # One byte over the cap so decode_result says "oversized".
                result=result + (b"\0" if oversized else b""),
                duration_ms=(time.monotonic() - start) * 1000,
                killed_reason="wall-clock limit" if timed_out else None,
            )


if __name__ == "__main__":
    serve()
