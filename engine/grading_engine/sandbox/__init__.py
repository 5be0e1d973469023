"""Isolation for learner code: bubblewrap sandboxes and a warm process pool.

`SandboxRunner` starts one cold sandbox per job; `WarmPool` keeps one
preloaded sandboxed worker per slot and forks it per job. Both implement
`grading_engine.runner.Runner`. They check at start which protections the
machine really gives (`probe_protections`) and refuse to grade without the required
ones unless `allow_degraded=True`. See docs/sandbox.md.
"""

from __future__ import annotations

from grading_engine.lazy import lazy_exports

# Imported on first use (PEP 562): the sandbox imports this package before
# `boot` (see boot.argv), and eager imports here would load the parent-side
# runners inside the sandbox for nothing.
_EXPORTS = {
    "limits": ("Limits",),
    "cold": ("SandboxRunner",),
    "probe": ("SandboxUnavailable", "probe_protections", "protection_report"),
    "pool": ("WarmPool",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted([*(n for names in _EXPORTS.values() for n in names), "make_runner"])


def make_runner(
    kind: str = "pool", *, allow_degraded: bool = False, size: int = 2, **options
):
    """A started runner: "pool" (warm, fast) or "cold" (one sandbox per job)."""
    if kind == "pool":
        from grading_engine.sandbox.pool import WarmPool

        return WarmPool(size, allow_degraded=allow_degraded, **options).start()
    if kind == "cold":
        from grading_engine.sandbox.cold import SandboxRunner

        return SandboxRunner(allow_degraded=allow_degraded, concurrency=size, **options)
    raise ValueError(f"unknown sandbox runner kind {kind!r} (pool or cold)")
