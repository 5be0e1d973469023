"""The boundary between trusted grading code and the learner's process.

A runner executes one job (a JSON-able dict, see engine/grading_engine/harness) in a
separate process and returns what came out as bytes. The verdict is never
computed here: grading_engine.grading parses `result` with size caps and compares.
`SubprocessRunner` (plain child process) and the sandbox runners in
engine/grading_engine/sandbox implement the same `run` signature.
"""

from __future__ import annotations

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


class Runner(Protocol):
    def run(self, job: dict, *, timeout: float) -> ChildOutcome: ...
