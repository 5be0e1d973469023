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
    killed_reason: str | None = None  # e.g. "wall-clock limit", "memory limit"

    @property
    def cancelled(self) -> bool:
        return self.killed_reason == CANCELLED


CANCELLED = "cancelled"


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

    The runner also drops the job to the lowest CPU priority then, so the
    grades that start meanwhile (a scheduler may start more while slots are
    held by likely loops) get the CPU first.
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
