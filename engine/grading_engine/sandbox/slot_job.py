"""One job on one slot worker: hand it over, drain its pipes, stop it in time.

Shared by the warm pool and the cold runner. The parent sends the job as a
memfd with fresh pipe ends (`grading_engine.sandbox.worker` has the
protocol), sets the child's OOM score from outside before it may run,
collects its output with caps, and has the worker kill it at its deadline
or when it is cancelled. The budget is CPU time, read from the job's own
clock (grading_engine.sandbox.job_clock).
"""

from __future__ import annotations

import json
import logging
import math
import os
import select
import signal
import socket
import time

from grading_engine.runner import ChildOutcome, Slow
from grading_engine.sandbox import bwrap, cgroups
from grading_engine.sandbox.job_clock import JobClock
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.slots import TIME_LIMITS, killed_reason, streams
from grading_engine.sandbox.worker import receive_with_sender, scrub, send

log = logging.getLogger("grading_engine.sandbox")
KILL_GRACE = 5.0  # seconds the worker gets to report a killed job
SCRUB_GRACE = 60.0  # seconds it gets to empty /tmp after a job


class WorkerDied(RuntimeError):
    """The slot's warm worker is gone; the slot must be restarted.

    `job_started` says whether the job's child had begun: before that,
    nothing of the learner's ran and the job can go to a fresh slot.
    """

    job_started = False


def cpu_budget(timeout: float) -> int:
    """RLIMIT_CPU for a job: its CPU budget, rounded up, plus one.

    The kernel's own stop, in case the parent's reads of the job's clock
    (grading_engine.sandbox.job_clock) ever fall behind.
    """
    return math.ceil(timeout) + 1


class SlotWorker:
    """The parent's handle on one slot's worker (a child of the zygote)."""

    def __init__(self, sock: socket.socket, pid: int, scratch: str | None = None):
        self.sock = sock
        self.pid = pid  # host pid, from the kernel (SO_PASSCRED)
        self.scratch = scratch  # degraded only: its private TMPDIR on the host
        self._pidfd = os.pidfd_open(pid)
        self._stopped = False

    def alive(self) -> bool:
        if self._stopped:
            return False
        ready, _, _ = select.select([self._pidfd], [], [], 0)
        return not ready  # a pidfd turns readable when its process exits

    def stop(self) -> None:
        """Close the socket (the worker exits on EOF) and kill it anyway.

        It is pid 1 of its namespace: whatever it left running dies with it.
        """
        if self._stopped:
            return
        self._stopped = True
        self.sock.close()
        try:
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        except OSError:
            pass  # already gone
        select.select([self._pidfd], [], [], 2.0)
        os.close(self._pidfd)
        if self.scratch is not None and scrub(self.scratch):
            os.rmdir(self.scratch)


def ended_outcome(reason: str) -> ChildOutcome:
    """The outcome of a job that never ran, or whose worker died under it."""
    return ChildOutcome(
        exit_code=None,
        timed_out=False,
        stdout="",
        stderr="",
        result=b"",
        duration_ms=0.0,
        killed_reason=reason,
    )


def run_on_slot(
    slot: bwrap.Slot,
    worker: SlotWorker,
    job: dict,
    timeout: float,
    limits: Limits,
    *,
    cancel=None,
    slow: Slow | None = None,
) -> ChildOutcome:
    """Hand `job` to `worker`, collect its output, stop it at its limit.

    `timeout` is the job's budget in CPU seconds (grading_engine.sandbox.
    job_clock); a wall-clock backstop stops a job that waits instead.
    `cancel` (a CancelToken) kills it early; `slow` is told when it runs
    long, and a job using the CPU is then demoted to the lowest priority.
    Raises WorkerDied when the worker stops answering; the caller restarts
    the slot.
    """
    memory_before = _memory_counts(slot)
    start = time.monotonic()
    (result_r, out_r, err_r), go_w = _hand_over(worker, job, timeout)
    collector = streams(limits, out_r, err_r, result_r)
    exit_code, cpu_ms, why, started = None, None, "eof", False
    try:
        try:
            started, exit_code, pid = _let_child_start(slot, worker, go_w)
        finally:
            os.close(go_w)  # said go, or (EOF) that the child must not run
        if started:
            clock = JobClock(pid, budget=timeout, start=start, slow=slow)
            exit_code, cpu_ms, why = _wait_for_child(worker, collector, clock, cancel)
        else:  # it died before it could start: take what is in the pipes
            collector.pump(time.monotonic() + KILL_GRACE)
        duration_ms = (time.monotonic() - start) * 1000
        try:
            clean = _report(worker, time.monotonic() + SCRUB_GRACE)
        except WorkerDied:
            clean = None
    except (OSError, ValueError) as exc:  # ValueError: a socket closed under us
        died = WorkerDied(str(exc))
        died.job_started = started
        raise died from None
    except WorkerDied as exc:
        exc.job_started = started
        raise
    finally:
        collector.close()
    if clean is None or not clean.get("clean"):
        # The job's outcome stands; its slot must not serve another.
        log.warning("sandbox slot %d could not empty /tmp: restarting", slot.index)
        worker.stop()
    out, err, result = (collector.streams[k] for k in ("stdout", "stderr", "result"))
    kills, hits, host = (
        after - before
        for after, before in zip(_memory_counts(slot), memory_before, strict=True)
    )
    memory_killed = kills > 0 and hits > 0  # at its own limit
    reason = killed_reason(
        why=why,
        exit_code=exit_code,
        memory_killed=memory_killed,
        host_killed=host > 0 and not hits,
    )
    return ChildOutcome(
        exit_code=exit_code,
        timed_out=reason in TIME_LIMITS,
        stdout=out.text(),
        stderr=err.text(),
        result=bytes(result.data),
        duration_ms=duration_ms,
        killed_reason=reason,
        cpu_ms=cpu_ms,
    )


def _memory_counts(slot: bwrap.Slot) -> tuple[int, int, int]:
    """(the slot's OOM kills, its own limit reached, the host's OOM kills)."""
    group = slot.cgroup
    if group is None:
        return 0, 0, cgroups.host_oom_kills()
    return group.oom_kills(), group.limit_hits(), cgroups.host_oom_kills()


def _let_child_start(
    slot: bwrap.Slot, worker: SlotWorker, go_w: int
) -> tuple[bool, int | None, int | None]:
    """Set the new child's OOM score from outside, then let it run.

    The child's first message carries its host pid (SO_PASSCRED); it waits
    on `go_w` until we (root) have written its oom_score_adj, so under
    memory pressure the kernel kills the job, never the warm worker. The job
    cannot lower it: it is non-dumpable, so the file is root's, and seccomp
    keeps it so; with CAP_SYS_RESOURCE our write also raises its
    oom_score_adj_min. Returns (True, None, host pid) once the child runs,
    or (False, exit code, None) for a child that ended before it started.
    """
    received = receive_by(worker.sock, time.monotonic() + KILL_GRACE)
    if received is None:
        raise WorkerDied("worker did not start the job")
    message, pid = received
    if not message.get("started"):
        return False, message.get("exit_code"), None
    if pid is not None and _prefer_for_oom_kill(pid):
        os.write(go_w, b"g")
    elif slot.uid is None:
        os.write(go_w, b"g")  # degraded: no root, no protection anyway
    else:
        log.error("sandbox slot %d: cannot set the job's oom_score_adj", slot.index)
    return True, None, pid


def _wait_for_child(worker: SlotWorker, collector, clock: JobClock, cancel):
    """Drain the job's pipes until it ends; stop it at a limit or a cancel.

    Returns (exit code, CPU ms, why it ended).
    """
    collector.watch(worker.sock, "worker")
    if cancel is not None:
        collector.watch(cancel, "cancelled")
    while True:
        why = collector.pump(clock.next_check(time.monotonic()))
        if why != "timeout":
            break
        why = clock.check(time.monotonic())
        if why is not None:
            break
    if why == "worker":
        exit_code, cpu_ms = _exit_report(worker, time.monotonic() + KILL_GRACE)
        collector.selector.unregister(worker.sock)
        # The child is gone; its pipes are at EOF or about to be.
        return exit_code, cpu_ms, collector.pump(time.monotonic() + KILL_GRACE)
    if why == "eof":
        # Every pipe is closed, but a child that closed them itself may
        # live on: it still gets only its budget (or a cancel).
        why = _wait_without_pipes(worker, clock, cancel)
        if why == "worker":  # the child exited: the worker reports it
            return (*_exit_report(worker, time.monotonic() + KILL_GRACE), "eof")
    # a limit, cancel, flood or a silent child: the worker kills it and reports.
    send(worker.sock, {"kill": True})
    return (*_exit_report(worker, time.monotonic() + KILL_GRACE), why)


def _wait_without_pipes(worker: SlotWorker, clock: JobClock, cancel) -> str:
    """Wait for the worker's report, a cancel or a limit: "worker", "cancelled",
    or a limit as JobClock.check names it ("cpu", "timeout", "busy")."""
    waits = [worker.sock] + ([cancel] if cancel is not None else [])
    while True:
        now = time.monotonic()
        ready, _, _ = select.select(waits, [], [], max(clock.next_check(now) - now, 0))
        if worker.sock in ready:
            return "worker"
        if ready:
            return "cancelled"
        why = clock.check(time.monotonic())
        if why is not None:
            return why


def _report(worker: SlotWorker, deadline: float) -> dict | None:
    """The worker's next message, or None when none came by `deadline`."""
    received = receive_by(worker.sock, deadline)
    return None if received is None else received[0]


def _exit_report(
    worker: SlotWorker, deadline: float
) -> tuple[int | None, float | None]:
    """Wait for the worker's {"exit_code", "cpu_ms"} report, or declare it dead."""
    message = _report(worker, deadline)
    if message is None:
        raise WorkerDied("worker did not report the job's exit")
    cpu_ms = message.get("cpu_ms")
    return message.get("exit_code"), cpu_ms if isinstance(cpu_ms, float) else None


def receive_by(sock: socket.socket, deadline: float) -> tuple[dict, int | None] | None:
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


def _hand_over(worker: SlotWorker, job: dict, timeout: float) -> tuple[tuple, int]:
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
