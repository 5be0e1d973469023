"""One fresh sandbox per job: bwrap + `python -m grading_engine.sandbox.boot cold`.

The slow, simple path (~2 s of `import torch` per grade): nothing is
shared between jobs at all. Used where a warm pool is not worth its memory
(the `grade` management command, a one-off regrade) and as the baseline
the benchmark compares the pool with.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import threading
import time

from grading_engine.runner import ChildOutcome
from grading_engine.sandbox import bwrap, probe
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.pipes import Stream
from grading_engine.sandbox.slots import SlotSet, kill_uid, killed_reason, streams
from grading_engine.sandbox.staging import SANDBOX_TIKTOKEN, prepare_layout

COLD_UID_BASE = bwrap.UID_BASE + 100


def cpu_budget(timeout: float) -> int:
    """CPU seconds for a job: its wall-clock budget, rounded up, plus one."""
    return math.ceil(timeout) + 1


def limits_arg(limits: Limits) -> str:
    return json.dumps(dataclasses.asdict(limits))


def sandbox_job(job: dict) -> tuple[dict, str | None]:
    """The job as the sandbox sees it: tiktoken files at their bound path."""
    host_dir = job.get("tiktoken_cache_dir")
    if not host_dir:
        return job, None
    if bwrap.bwrap_path() is None:
        return job, str(host_dir)  # degraded: the child sees host paths
    return {**job, "tiktoken_cache_dir": SANDBOX_TIKTOKEN}, str(host_dir)


class SandboxRunner:
    """Run each job in its own cold bubblewrap sandbox (a `runner.Runner`)."""

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        allow_degraded: bool = False,
        concurrency: int = 2,
        uid_base: int = COLD_UID_BASE,
        startup_timeout: float = 60.0,
    ):
        self.startup_timeout = startup_timeout
        found = probe.require(allow_degraded=allow_degraded)
        self.limits = limits or Limits()
        if probe.missing_required(found):
            self.limits = dataclasses.replace(
                self.limits, require_seccomp=found.get("seccomp") is True
            )
        self.protections = found
        self.slots = SlotSet(
            concurrency, uid_base=uid_base, name="cold", limits=self.limits
        )

    def run(self, job: dict, *, timeout: float) -> ChildOutcome:
        with self.slots.checkout() as slot:
            return self._run(slot, job, timeout)

    def close(self) -> None:
        self.slots.remove()

    def _run(self, slot: bwrap.Slot, job: dict, timeout: float) -> ChildOutcome:
        job, tiktoken_dir = sandbox_job(job)
        oom_before = slot.cgroup.oom_kills() if slot.cgroup else 0
        result_r, result_w = os.pipe()
        ready_r, ready_w = os.pipe()
        start = time.monotonic()
        try:
            process = self._spawn(
                slot, timeout, tiktoken_dir, result_w=result_w, ready_w=ready_w
            )
        except BaseException:
            os.close(result_r)
            os.close(ready_r)
            raise
        finally:
            os.close(result_w)
            os.close(ready_w)
        threading.Thread(
            target=_feed,
            args=(process.stdin, json.dumps(job).encode("utf-8")),
            daemon=True,
        ).start()
        collector = streams(
            self.limits, process.stdout.fileno(), process.stderr.fileno(), result_r
        )
        collector.add("ready", Stream(ready_r, 0, counts_as_output=False))
        why = self._wait(process, collector, start=start, timeout=timeout)
        exit_code = _reap(process, slot, killed=why != "eof")
        out, err, result = (
            collector.streams[k] for k in ("stdout", "stderr", "result")
        )
        outcome = ChildOutcome(
            exit_code=exit_code,
            timed_out=why == "timeout",
            stdout=out.text(),
            stderr=err.text(),
            result=bytes(result.data),
            duration_ms=(time.monotonic() - start) * 1000,
            killed_reason=killed_reason(
                why=why,
                exit_code=exit_code,
                memory_killed=bool(slot.cgroup)
                and slot.cgroup.oom_kills() > oom_before,
            ),
        )
        collector.close(fds=False)
        process.stdout.close()
        process.stderr.close()
        os.close(result_r)
        os.close(ready_r)
        return outcome

    def _spawn(
        self, slot: bwrap.Slot, timeout: float, tiktoken_dir, *, result_w, ready_w
    ) -> subprocess.Popen:
        """Start bwrap + `boot cold` with the result and ready pipes passed in."""
        layout = prepare_layout()
        boot = [
            "-m",
            "grading_engine.sandbox.boot",
            "cold",
            str(result_w),
            str(ready_w),
        ]
        boot += [limits_arg(self.limits), str(cpu_budget(timeout))]
        args = bwrap.command(
            layout, boot, limits=self.limits, tiktoken_dir=tiktoken_dir
        )
        return bwrap.spawn(
            args,
            slot=slot,
            limits=self.limits,
            pass_fds=(result_w, ready_w),
            env=bwrap.unsandboxed_environment(layout, tiktoken_dir),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def _wait(self, process, collector, *, start: float, timeout: float) -> str:
        """Why the job ended: "eof" (by itself), "timeout" or an output cap."""
        # Python start-up and `import torch` come first; the job's wall clock
        # starts when the sandbox closes its ready pipe, locked down.
        why = collector.pump(start + self.startup_timeout, until_closed="ready")
        deadline = time.monotonic() + timeout
        if why == "closed":
            why = collector.pump(deadline)
        if why == "eof":
            # Every pipe is closed, but a job that closed them itself may
            # live on: it still gets only its time budget.
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0.01))
            except subprocess.TimeoutExpired:
                why = "timeout"
        return why


def _reap(process, slot: bwrap.Slot, *, killed: bool) -> int:
    """Kill the sandbox if asked, then everything it left; its exit code."""
    if killed:
        _kill(process)
    exit_code = process.wait()
    if bwrap.bwrap_path() and 128 < exit_code <= 128 + 64:
        exit_code = 128 - exit_code  # bwrap says 128+N for "killed by N"
    if slot.uid is not None:
        kill_uid(slot.uid)  # anything that slipped out of the pid namespace
    if slot.cgroup is not None:
        slot.cgroup.kill_all()
    return exit_code


def _feed(stream, payload: bytes) -> None:
    try:
        stream.write(payload)
        stream.close()
    except (OSError, ValueError):
        pass  # the sandbox ended before reading its job


def _kill(process: subprocess.Popen) -> None:
    # bwrap leads its own session; its --die-with-parent child takes the
    # whole pid namespace down with it.
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
