"""Isolation for learner code: bubblewrap sandboxes and a warm process pool.

`SandboxRunner` starts one cold sandbox per job; `WarmPool` keeps one
preloaded sandboxed worker per slot and forks it per job. Both implement
`grader.runner.Runner`. They check at start which protections the machine
really gives (`probe_protections`) and refuse to grade without the required
ones unless `allow_degraded=True`. See docs/sandbox.md.
"""

from __future__ import annotations

from grader.sandbox.cold import SandboxRunner
from grader.sandbox.limits import Limits
from grader.sandbox.pool import WarmPool
from grader.sandbox.probe import (
    SandboxUnavailable,
    probe_protections,
    protection_report,
)

__all__ = [
    "Limits",
    "SandboxRunner",
    "SandboxUnavailable",
    "WarmPool",
    "make_runner",
    "probe_protections",
    "protection_report",
]


def make_runner(
    kind: str = "pool", *, allow_degraded: bool = False, size: int = 2, **options
):
    """A started runner: "pool" (warm, fast) or "cold" (one sandbox per job)."""
    if kind == "pool":
        return WarmPool(size, allow_degraded=allow_degraded, **options).start()
    if kind == "cold":
        return SandboxRunner(allow_degraded=allow_degraded, concurrency=size, **options)
    raise ValueError(f"unknown sandbox runner kind {kind!r} (pool or cold)")
