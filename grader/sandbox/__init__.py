"""Isolation for learner code: bubblewrap sandboxes and a warm process pool.

`SandboxRunner` starts one cold sandbox per job; `WarmPool` keeps one
preloaded sandboxed worker per slot and forks it per job. Both implement
`grader.runner.Runner`. They check at start which protections the machine
really gives (`probe_protections`) and refuse to grade without the required
ones unless `allow_degraded=True`. See docs/sandbox.md.
"""

from __future__ import annotations

import importlib

# Imported on first use (PEP 562): the sandbox starts as `python -m
# grader.sandbox.boot`, and an eager import of boot (via probe) here would
# make runpy warn on every job's stderr and load the parent-side runners
# inside the sandbox for nothing.
_MODULE_OF = {
    "Limits": "limits",
    "SandboxRunner": "cold",
    "SandboxUnavailable": "probe",
    "WarmPool": "pool",
    "probe_protections": "probe",
    "protection_report": "probe",
}

__all__ = [
    "Limits",
    "SandboxRunner",
    "SandboxUnavailable",
    "WarmPool",
    "make_runner",
    "probe_protections",
    "protection_report",
]


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def make_runner(
    kind: str = "pool", *, allow_degraded: bool = False, size: int = 2, **options
):
    """A started runner: "pool" (warm, fast) or "cold" (one sandbox per job)."""
    if kind == "pool":
        from grader.sandbox.pool import WarmPool

        return WarmPool(size, allow_degraded=allow_degraded, **options).start()
    if kind == "cold":
        from grader.sandbox.cold import SandboxRunner

        return SandboxRunner(allow_degraded=allow_degraded, concurrency=size, **options)
    raise ValueError(f"unknown sandbox runner kind {kind!r} (pool or cold)")
