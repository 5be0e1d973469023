"""Slots: one uid and one cgroup per concurrent sandbox, handed out in turn.

Two jobs never share a slot at the same time, so a job can only ever see,
signal or starve processes of its own uid, and its cgroup's memory and
pids count only itself (and, for the pool, its slot's warm worker).
"""

from __future__ import annotations

import fcntl
import os
import queue
import signal
import time
from contextlib import contextmanager

from grading_engine.runner import BUSY_LIMIT, CANCELLED, CPU_LIMIT, WALL_LIMIT
from grading_engine.sandbox import cgroups
from grading_engine.sandbox.bwrap import Slot, bwrap_path
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.pipes import Collector, Stream

LOCK_DIR = "/run/grader-sandbox"
UID_SPAN = 100  # uids a SlotSet may claim from its base


class SlotSet:
    """A fixed set of slots with a blocking checkout.

    Uids are claimed with a lock file each, so several grading processes on
    one machine (Celery's prefork children) never share a slot uid.
    """

    def __init__(self, size: int, *, uid_base: int, name: str, limits: Limits):
        self._locks: list[int] = []
        # A uid of its own needs root to switch to, and bwrap to be useful
        # (without it, the degraded child runs the host's venv as we do).
        separate = os.geteuid() == 0 and bwrap_path() is not None
        uids = self._claim(size, uid_base) if separate else [None] * size
        self.slots = []
        for index, uid in enumerate(uids):
            group = cgroups.create(
                f"{name}-{uid if uid is not None else os.getpid()}-{index}",
                memory_bytes=limits.memory_bytes,
                pids=limits.pids,
            )
            self.slots.append(Slot(index=index, uid=uid, cgroup=group))
        self._free: queue.Queue[Slot] = queue.Queue()
        for slot in self.slots:
            self._free.put(slot)

    @contextmanager
    def checkout(self):
        slot = self._free.get()
        try:
            yield slot
        finally:
            self._free.put(slot)

    def _claim(self, size: int, base: int) -> list[int]:
        os.makedirs(LOCK_DIR, mode=0o700, exist_ok=True)
        uids = []
        for uid in range(base, base + UID_SPAN):
            fd = os.open(f"{LOCK_DIR}/uid-{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self._locks.append(fd)  # held (open) for the life of this process
            kill_uid(uid)  # leftovers of a crashed predecessor
            uids.append(uid)
            if len(uids) == size:
                return uids
        self.release()
        raise RuntimeError(f"no {size} free sandbox uids in {base}..{base + UID_SPAN}")

    def release(self) -> None:
        for fd in self._locks:
            os.close(fd)
        self._locks.clear()

    def remove(self) -> None:
        for slot in self.slots:
            if slot.uid is not None:
                kill_uid(slot.uid)
            if slot.cgroup is not None:
                slot.cgroup.remove()
        self.release()


def uid_pids(uid: int) -> list[int]:
    """Every live process whose real uid is `uid` (zombies are already dead)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except (OSError, ValueError):
            continue
        zombie = fields.get("State", "").strip().startswith(("Z", "X"))
        if not zombie and int(fields["Uid"].split()[0]) == uid:
            found.append(int(entry))
    return found


def kill_uid(uid: int, *, wait: float = 2.0) -> None:
    """SIGKILL every process of a slot uid: nothing outlives its sandbox."""
    deadline = time.monotonic() + wait
    while pids := uid_pids(uid):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if time.monotonic() > deadline:
            return
        time.sleep(0.01)


TIME_LIMITS = (CPU_LIMIT, WALL_LIMIT, BUSY_LIMIT)


# Not a limit of the job's: the host ran out of memory and its OOM killer
# chose the job (a job's oom_score_adj makes it the first choice, so that
# the warm worker survives). The job runs once more; then this is its error.
HOST_OUT_OF_MEMORY = (
    "the grading server ran out of memory (not your code's doing); "
    "submit again in a moment"
)


def killed_reason(
    *, why: str, exit_code: int | None, memory_killed: bool, host_killed: bool = False
) -> str | None:
    """Name the limit that ended the job, if one did (or that it was cancelled).

    `memory_killed`: the slot's own limit was reached and the job was killed;
    `host_killed`: an OOM killer fired on the host (not at the slot's limit)
    while the job ran, and the job died of SIGKILL."""
    if why == "cancelled":
        return CANCELLED
    if why == "cpu":
        return CPU_LIMIT
    if why == "timeout":
        return WALL_LIMIT
    if why == "busy":
        return BUSY_LIMIT
    if why == "flood":
        return "output limit"
    if memory_killed:
        return "memory limit"
    if host_killed and exit_code == -signal.SIGKILL:
        return HOST_OUT_OF_MEMORY
    if exit_code == -signal.SIGXCPU:  # RLIMIT_CPU's soft limit
        return CPU_LIMIT
    return None


def streams(
    limits: Limits, stdout_fd: int, stderr_fd: int, result_fd: int
) -> Collector:
    """A collector for the three pipes of one job, with the limits' caps."""
    return Collector(
        {
            "stdout": Stream(stdout_fd, limits.output_bytes),
            "stderr": Stream(stderr_fd, limits.output_bytes),
            # One byte over the cap so decode_result can say "oversized".
            "result": Stream(result_fd, limits.result_bytes + 1, False),
        },
        flood_limit=limits.output_kill_bytes,
    )
