"""A plain child process as the grading boundary (no isolation).

Good for development and tests: the learner's code runs in its own process
group with a scrubbed environment, a fresh working directory, capped output
and a wall-clock kill. It is NOT a sandbox: the child can read files and use
the network. grading_engine.sandbox wraps the same job in bubblewrap for that.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from grading_engine.harness.result_fd import RESULT_FD
from grading_engine.runner import ChildOutcome

# The directory holding the `grading_engine` package: the child's only path.
ENGINE_ROOT = Path(__file__).resolve().parents[2]

# `python -m grading_engine.harness` expects its result pipe at fd 3, but Popen keeps
# inherited descriptors at their parent numbers. This bootstrap moves the pipe
# to 3 inside the child, closes the original and then runs the harness.
_BOOTSTRAP = (
    "import os, runpy, sys\n"
    "fd = int(sys.argv.pop(1))\n"
    f"if fd != {RESULT_FD}:\n"
    f"    os.dup2(fd, {RESULT_FD})\n"
    "    os.close(fd)\n"
    f"os.set_inheritable({RESULT_FD}, False)\n"
    "runpy.run_module('grading_engine.harness', run_name='__main__', alter_sys=True)\n"
)


class _CappedReader(threading.Thread):
    """Drain a pipe to EOF, keeping at most `cap` bytes, so the child never
    blocks on a full pipe and a flood cannot exhaust the parent's memory."""

    def __init__(self, stream, cap: int):
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.chunks: list[bytes] = []
        self.size = 0
        self.truncated = False

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(65536):
                room = self.cap - self.size
                if len(chunk) > room:
                    self.truncated = True
                    chunk = chunk[: max(room, 0)]
                if chunk:
                    self.chunks.append(chunk)
                    self.size += len(chunk)
        except (OSError, ValueError):
            pass  # closed under us after a kill

    def data(self) -> bytes:
        return b"".join(self.chunks)


class SubprocessRunner:
    """Run a job as `python -m grading_engine.harness` in a fresh process group."""

    def __init__(
        self,
        python: str = sys.executable,
        output_cap: int = 64_000,
        result_cap: int = 64 * 1024 * 1024,
    ):
        self.python = python
        self.output_cap = output_cap
        self.result_cap = result_cap

    def run(self, job: dict, *, timeout: float) -> ChildOutcome:
        payload = json.dumps(job).encode("utf-8")
        with tempfile.TemporaryDirectory(prefix="grader-job-") as workdir:
            return self._run_in(workdir, payload, job, timeout)

    def _run_in(
        self, workdir: str, payload: bytes, job: dict, timeout: float
    ) -> ChildOutcome:
        read_fd, write_fd = os.pipe()
        start = time.monotonic()
        try:
            process = subprocess.Popen(
                [self.python, "-c", _BOOTSTRAP, str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(write_fd,),
                cwd=workdir,
                env=child_environment(workdir, job),
                start_new_session=True,  # its own process group, killed whole
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # the child holds the only write end now

        result_stream = os.fdopen(read_fd, "rb")
        readers = [
            _CappedReader(process.stdout, self.output_cap),
            _CappedReader(process.stderr, self.output_cap),
            # One byte over the cap so decode_result can say "oversized".
            _CappedReader(result_stream, self.result_cap + 1),
        ]
        for reader in readers:
            reader.start()
        threading.Thread(
            target=_feed, args=(process.stdin, payload), daemon=True
        ).start()

        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # Also reaps anything the learner left running in the group.
            kill_group(process.pid)
            process.wait()
        for reader in readers:
            reader.join(timeout=5)
        for stream in (process.stdout, process.stderr, result_stream):
            stream.close()
        duration_ms = (time.monotonic() - start) * 1000

        stdout, stderr, result = readers
        return ChildOutcome(
            exit_code=process.returncode,
            timed_out=timed_out,
            stdout=_text(stdout),
            stderr=_text(stderr),
            result=result.data(),
            duration_ms=duration_ms,
            killed_reason="wall-clock limit" if timed_out else None,
        )


def _feed(stream, payload: bytes) -> None:
    try:
        stream.write(payload)
        stream.close()
    except (OSError, ValueError):
        pass  # the child exited or closed stdin without reading the job


def child_environment(workdir: str, job: dict) -> dict[str, str]:
    """The scrubbed environment a job's child runs in (one thread, no user site)."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(ENGINE_ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    if job.get("tiktoken_cache_dir"):
        env["TIKTOKEN_CACHE_DIR"] = str(job["tiktoken_cache_dir"])
    return env


def kill_group(pid: int) -> None:
    """SIGKILL a child's whole process group (it leads its own session)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _text(reader: _CappedReader) -> str:
    text = reader.data().decode("utf-8", errors="replace")
    if reader.truncated:
        text += f"\n[output truncated at {reader.cap:,} bytes]"
    return text
