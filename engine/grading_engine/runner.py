"""The boundary between trusted grading code and the learner's process.

A runner executes one job (a JSON-able dict, see engine/grading_engine/harness) in a
separate process and returns what came out as bytes. The verdict is never
computed here: grading_engine.grading parses `result` with size caps and compares.
`SubprocessRunner` (plain child process) and the sandbox runners in
engine/grading_engine/sandbox implement the same `run` signature.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass
class ChildOutcome:
    """Raw facts about one child run; nothing here is trusted content."""

    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    result: bytes  # what the child wrote to its result descriptor
    duration_ms: float
    killed_reason: str | None = None  # e.g. CPU_LIMIT, "memory limit"
    # CPU time the job's process used, where the runner measures it (the
    # sandbox does; then its budget is CPU time and the wall clock a backstop).
    cpu_ms: float | None = None

    @property
    def cancelled(self) -> bool:
        return self.killed_reason == CANCELLED


CANCELLED = "cancelled"
CPU_LIMIT = "CPU time limit"
# The only limit of a runner that measures no CPU time; the sandbox's
# backstop for a job that waits instead of computing.
WALL_LIMIT = "wall-clock limit"
# The sandbox's backstop, reached by a job that was computing but was kept
# from a core by a busy machine until even the moved backstop passed.
BUSY_LIMIT = "wall-clock limit on a busy machine"


class CancelToken:
    """Set from any thread to stop a job; runners watch its descriptor.

    An eventfd, so a runner waiting on the job's pipes wakes up the moment
    it is set, without polling.
    """

    def __init__(self):
        self._fd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)

    def fileno(self) -> int:
        return self._fd

    def set(self) -> None:
        os.eventfd_write(self._fd, 1)

    def is_set(self) -> bool:
        return bool(select.select([self._fd], [], [], 0)[0])

    def close(self) -> None:
        os.close(self._fd)


@dataclass(frozen=True)
class Slow:
    """Say when a job runs longer than it should: `notify()` after `after` s.

    The sandbox counts `after` in CPU seconds and drops a job that reaches
    it to the lowest CPU priority, so the grades that start meanwhile (a
    scheduler may start more while slots are held by likely loops) get the
    CPU first; a job that only waits is reported once it has waited its
    whole budget. A runner without CPU accounting counts wall seconds.
    """

    after: float
    notify: Callable[[], None]


class Runner(Protocol):
    def run(
        self,
        job: dict,
        *,
        timeout: float,
        cancel: CancelToken | None = None,
        slow: Slow | None = None,
    ) -> ChildOutcome: ...
