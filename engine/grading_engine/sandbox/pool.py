"""A warm pool: preloaded sandboxed workers, one fresh fork per grade.

Each slot is one bubblewrap sandbox running `grading_engine.sandbox.worker` as the
slot's own uid, in the slot's cgroup, with torch imported and the reference
models built. A grade costs a fork (~0.1 s), not a Python start and an
`import torch` (~2 s). The fork is the isolation between learners: the
child dies after its grade, so nothing it patched reaches the next one.

A slot whose worker died (killed, out of memory, a crash) is restarted on
its next use; the job that was running reports an error.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from grading_engine.runner import ChildOutcome
from grading_engine.sandbox import bwrap, probe
from grading_engine.sandbox.cold import cpu_budget, limits_arg
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.slots import SlotSet, kill_uid, killed_reason, streams
from grading_engine.sandbox.staging import SANDBOX_TIKTOKEN, prepare_layout
from grading_engine.sandbox.worker import receive, receive_with_sender, scrub, send

log = logging.getLogger("grading_engine.sandbox")
KILL_GRACE = 5.0  # seconds the worker gets to report a killed job
SCRUB_GRACE = 60.0  # seconds it gets to empty /tmp after a job


class WorkerDied(RuntimeError):
    """The slot's warm worker is gone; the slot must be restarted."""


class _Worker:
    """The parent's handle on one slot's sandboxed worker."""

    def __init__(
        self,
        process: subprocess.Popen,
        sock: socket.socket,
        log_file,
        scratch: str | None = None,
    ):
        self.process = process
        self.sock = sock
        self.log_file = log_file  # the worker's own stderr, for start-up errors
        self.scratch = scratch  # degraded only: its private TMPDIR on the host

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self) -> str:
        self.log_file.seek(0)
        return self.log_file.read()[-2000:].decode("utf-8", errors="replace")

    def stop(self) -> None:
        """Close the socket (the worker exits on EOF), kill if it lingers."""
        if self.log_file.closed:
            return  # already stopped
        self.sock.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            # Not reaped yet, so its process group id cannot have been reused.
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log_file.close()
        if self.scratch is not None and scrub(self.scratch):
            os.rmdir(self.scratch)


class WarmPool:
    """Warm sandboxed workers, one per slot (a grading_engine.runner.Runner)."""

    def __init__(
        self,
        size: int = 2,
        *,
        limits: Limits | None = None,
        allow_degraded: bool = False,
        tiktoken_cache_dir: str | None = None,  # default: the reference's cache
        uid_base: int = bwrap.UID_BASE,
        start_timeout: float = 180.0,
    ):
        self.size = size
        self.limits = limits or Limits()
        self.allow_degraded = allow_degraded
        self.tiktoken_cache_dir = tiktoken_cache_dir
        self.uid_base = uid_base
        self.start_timeout = start_timeout
        self.protections: dict[str, bool | str] = {}
        self.slots: SlotSet | None = None
        self._workers: dict[int, _Worker] = {}
        # --die-with-parent ties a sandbox to the *thread* that started it,
        # so every worker is spawned from this one long-lived thread.
        self._spawner: ThreadPoolExecutor | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> WarmPool:
        """Probe, then start every slot's worker (in parallel); returns self."""
        if self.slots is not None:
            return self
        found = probe.require(allow_degraded=self.allow_degraded)
        self.protections = found
        if probe.missing_required(found):
            self.limits = dataclasses.replace(
                self.limits, require_seccomp=found.get("seccomp") is True
            )
        if self.tiktoken_cache_dir is None:
            self.tiktoken_cache_dir = _default_tiktoken_dir()
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="sandbox-spawner")
        self.slots = SlotSet(
            self.size, uid_base=self.uid_base, name="pool", limits=self.limits
        )
        pending: list[_Worker] = []
        try:
            pending.extend(self._launch(slot) for slot in self.slots.slots)
            for slot, worker in zip(self.slots.slots, pending, strict=True):
                self._workers[slot.index] = self._await_ready(worker)
        except BaseException:
            for worker in pending:
                worker.stop()
            self.close()
            raise
        return self

    def close(self) -> None:
        for worker in self._workers.values():
            worker.stop()
        self._workers.clear()
        if self.slots is not None:
            self.slots.remove()
            self.slots = None
        if self._spawner is not None:
            self._spawner.shutdown()
            self._spawner = None

    def __enter__(self) -> WarmPool:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def worker_pids(self) -> dict[int, int]:
        """Slot index -> pid of its bwrap process (for monitoring)."""
        return {index: w.process.pid for index, w in self._workers.items()}

    # -- grading -----------------------------------------------------------

    def run(self, job: dict, *, timeout: float) -> ChildOutcome:
        if self.slots is None:
            raise RuntimeError("WarmPool.run before start()")
        with self.slots.checkout() as slot:
            worker = self._workers.get(slot.index)
            if worker is None or not worker.alive():
                worker = self._restart(slot)
            try:
                return self._run_on(slot, worker, job, timeout)
            except WorkerDied as exc:
                log.warning("sandbox slot %d lost its worker: %s", slot.index, exc)
                try:
                    self._restart(slot)
                except Exception:  # the next job on this slot tries again
                    log.exception("sandbox slot %d failed to restart", slot.index)
                return ChildOutcome(
                    exit_code=None,
                    timed_out=False,
                    stdout="",
                    stderr="",
                    result=b"",
                    duration_ms=0.0,
                    killed_reason=f"sandbox worker died ({exc})",
                )

    def _run_on(
        self, slot: bwrap.Slot, worker: _Worker, job: dict, timeout: float
    ) -> ChildOutcome:
        oom_before = slot.cgroup.oom_kills() if slot.cgroup else 0
        start = time.monotonic()
        (result_r, out_r, err_r), go_w = _hand_over(
            worker, self._sandbox_job(job), timeout
        )
        collector = streams(self.limits, out_r, err_r, result_r)
        exit_code, why = None, "eof"
        deadline = start + timeout
        try:
            try:
                started, exit_code = self._let_child_start(slot, worker, go_w)
            finally:
                os.close(go_w)  # said go, or (EOF) that the child must not run
            if started:
                exit_code, why = self._wait_for_child(worker, collector, deadline)
            else:  # it died before it could start: take what is in the pipes
                collector.pump(time.monotonic() + KILL_GRACE)
            duration_ms = (time.monotonic() - start) * 1000
            try:
                clean = self._report(worker, time.monotonic() + SCRUB_GRACE)
            except WorkerDied:
                clean = None
        except OSError as exc:
            raise WorkerDied(str(exc)) from None
        finally:
            collector.close()
        if clean is None or not clean.get("clean"):
            # The job's outcome stands; its slot must not serve another.
            log.warning("sandbox slot %d could not empty /tmp: restarting", slot.index)
            worker.stop()
        out, err, result = (
            collector.streams[k] for k in ("stdout", "stderr", "result")
        )
        memory_killed = bool(slot.cgroup) and slot.cgroup.oom_kills() > oom_before
        return ChildOutcome(
            exit_code=exit_code,
            timed_out=why == "timeout",
            stdout=out.text(),
            stderr=err.text(),
            result=bytes(result.data),
            duration_ms=duration_ms,
            killed_reason=killed_reason(
                why=why, exit_code=exit_code, memory_killed=memory_killed
            ),
        )

    def _let_child_start(
        self, slot: bwrap.Slot, worker: _Worker, go_w: int
    ) -> tuple[bool, int | None]:
        """Set the new child's OOM score from outside, then let it run.

        The child's first message carries its host pid (SO_PASSCRED); it
        waits on `go_w` until we (root) have written its oom_score_adj, so
        under memory pressure the kernel kills the job, never the warm
        worker. The job cannot lower it: it is non-dumpable, so the file is
        root's, and seccomp keeps it so; with CAP_SYS_RESOURCE our write also
        raises its oom_score_adj_min.
        Returns (True, None) once the child runs, or (False, exit code) for a
        child that ended before it started.
        """
        received = _receive_by(worker.sock, time.monotonic() + KILL_GRACE)
        if received is None:
            raise WorkerDied("worker did not start the job")
        message, pid = received
        if not message.get("started"):
            return False, message.get("exit_code")
        if pid is not None and _prefer_for_oom_kill(pid):
            os.write(go_w, b"g")
        elif slot.uid is None:
            os.write(go_w, b"g")  # degraded: no root, no protection anyway
        else:
            log.error("sandbox slot %d: cannot set the job's oom_score_adj", slot.index)
        return True, None

    def _wait_for_child(self, worker: _Worker, collector, deadline: float):
        """Drain the job's pipes until it ends; kill it at the deadline."""
        collector.watch(worker.sock)
        why = collector.pump(deadline)
        if why == "watch":
            exit_code = self._exit_code(worker, time.monotonic() + KILL_GRACE)
            collector.selector.unregister(worker.sock)
            # The child is gone; its pipes are at EOF or about to be.
            return exit_code, collector.pump(time.monotonic() + KILL_GRACE)
        if why == "eof":
            # Every pipe is closed, but a child that closed them itself may
            # live on: it still gets only its time budget.
            report = self._report(worker, deadline)
            if report is not None:
                return report.get("exit_code"), why
        # timeout, flood or a silent child: the worker kills it and reports.
        send(worker.sock, {"kill": True})
        exit_code = self._exit_code(worker, time.monotonic() + KILL_GRACE)
        if why == "eof" and exit_code == -signal.SIGKILL:
            why = "timeout"
        return exit_code, why

    @staticmethod
    def _report(worker: _Worker, deadline: float) -> dict | None:
        """The worker's next message, or None when none came by `deadline`."""
        received = _receive_by(worker.sock, deadline)
        return None if received is None else received[0]

    def _exit_code(self, worker: _Worker, deadline: float) -> int | None:
        """Wait for the worker's {"exit_code"} report, or declare it dead."""
        message = self._report(worker, deadline)
        if message is None:
            raise WorkerDied("worker did not report the job's exit")
        return message.get("exit_code")

    def _sandbox_job(self, job: dict) -> dict:
        host_dir = job.get("tiktoken_cache_dir")
        if not host_dir:
            return job
        if bwrap.bwrap_path() is None:
            return job  # degraded: the child sees host paths
        if self.tiktoken_cache_dir and os.path.realpath(
            str(host_dir)
        ) == os.path.realpath(self.tiktoken_cache_dir):
            return {**job, "tiktoken_cache_dir": SANDBOX_TIKTOKEN}
        log.warning("job's tiktoken dir %s is not bound in the pool", host_dir)
        return {**job, "tiktoken_cache_dir": None}

    # -- slots -------------------------------------------------------------

    def _launch(self, slot: bwrap.Slot):
        """Start a slot's worker (from the spawner thread); not yet ready."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The kernel then stamps every message with its sender's host pid.
        parent.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        boot = ["-m", "grading_engine.sandbox.boot", "warm", str(child.fileno())]
        boot += [limits_arg(self.limits)]
        layout, tiktoken = prepare_layout(), self.tiktoken_cache_dir
        args = bwrap.command(layout, boot, limits=self.limits, tiktoken_dir=tiktoken)
        log_file = tempfile.TemporaryFile()
        env, scratch = bwrap.unsandboxed_environment(layout, tiktoken), None
        if env:
            # Degraded, no bwrap: the worker empties its TMPDIR after every
            # job, so it must be a directory of its own, never the host's /tmp.
            scratch = tempfile.mkdtemp(prefix="grader-scratch-")
            env["TMPDIR"] = env["HOME"] = scratch
        future = self._spawner.submit(
            bwrap.spawn,
            args,
            slot=slot,
            limits=self.limits,
            env=env,
            pass_fds=(child.fileno(),),
            stderr=log_file.fileno(),
        )
        try:
            process = future.result()
        finally:
            child.close()
        return _Worker(process, parent, log_file, scratch)

    def _await_ready(self, worker: _Worker) -> _Worker:
        worker.sock.settimeout(self.start_timeout)
        try:
            message, _ = receive(worker.sock)
        except (TimeoutError, OSError):
            message = None
        worker.sock.settimeout(None)
        if not message or not message.get("ready"):
            detail = (message or {}).get("error") or worker.log_tail()
            worker.stop()
            raise RuntimeError(f"sandbox worker failed to start:\n{detail}")
        return worker

    def _restart(self, slot: bwrap.Slot) -> _Worker:
        old = self._workers.pop(slot.index, None)
        if old is not None:
            old.stop()
        if slot.uid is not None:
            kill_uid(slot.uid)
        if slot.cgroup is not None:
            slot.cgroup.kill_all()
        worker = self._await_ready(self._launch(slot))
        self._workers[slot.index] = worker
        log.info("sandbox slot %d restarted", slot.index)
        return worker


def _receive_by(sock: socket.socket, deadline: float) -> tuple[dict, int | None] | None:
    """The next message and its sender's host pid; None if none came in time.

    Raises WorkerDied when the worker closed its end.
    """
    sock.settimeout(max(deadline - time.monotonic(), 0.01))
    try:
        message, fds, pid = receive_with_sender(sock)
    except TimeoutError:
        return None
    finally:
        sock.settimeout(None)
    for fd in fds:
        os.close(fd)
    if message is None:
        raise WorkerDied("control socket closed")
    return message, pid


def _prefer_for_oom_kill(pid: int) -> bool:
    """oom_score_adj 1000 for a job, set by us (root) so it cannot lower it."""
    try:
        with open(f"/proc/{pid}/oom_score_adj", "w") as f:
            f.write("1000")
        return True
    except OSError:
        return False


def _default_tiktoken_dir() -> str:
    """The host's tiktoken cache, installed now if it is not yet."""
    from grading_engine.reference.tokenizer import (
        default_cache_dir,
        install_tiktoken_cache,
    )

    return str(install_tiktoken_cache(default_cache_dir()))


def _hand_over(worker: _Worker, job: dict, timeout: float) -> tuple[tuple, int]:
    """Send one job to the warm worker: (result, stdout, stderr) ends and go.

    The job travels as a memfd, with the write ends of three pipes and
    the read end of the "go" pipe the forked child waits on.
    """
    job_fd = os.memfd_create("job", os.MFD_CLOEXEC)
    os.write(job_fd, json.dumps(job).encode("utf-8"))
    os.lseek(job_fd, 0, os.SEEK_SET)
    pipes = [os.pipe() for _ in range(3)]  # result, stdout, stderr
    go_r, go_w = os.pipe()  # the child waits on it before anything else
    try:
        send(
            worker.sock,
            {"cpu_seconds": cpu_budget(timeout)},
            [job_fd, *(w for _, w in pipes), go_r],
        )
    except OSError as exc:
        for r, _ in pipes:
            os.close(r)
        os.close(go_w)
        raise WorkerDied(f"cannot reach worker: {exc}") from None
    finally:
        os.close(job_fd)
        os.close(go_r)
        for _, w in pipes:
            os.close(w)
    return tuple(r for r, _ in pipes), go_w
