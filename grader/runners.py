"""The runner this process grades with, built once from settings.

Workers keep a warm pool (torch imported, reference models built) so a grade
costs milliseconds; one-shot callers such as `manage.py grade` use a cold
sandbox. Either refuses to start where the sandbox's protections are missing,
unless GRADER_ALLOW_UNSAFE_SANDBOX says otherwise (local development).
"""

from __future__ import annotations

import atexit
import threading

from django.conf import settings

from grader.runner import Runner

_lock = threading.Lock()
_runners: dict[str, Runner] = {}


def runner_get(kind: str | None = None) -> Runner:
    """Return this process's runner of `kind` ("pool" or "cold"), creating it once."""
    kind = kind or settings.GRADER_RUNNER
    with _lock:
        if kind not in _runners:
            from grader.sandbox import make_runner

            runner = make_runner(
                kind=kind,
                allow_degraded=settings.GRADER_ALLOW_UNSAFE_SANDBOX,
                size=settings.GRADER_POOL_SIZE,
            )
            close = getattr(runner, "close", None)
            if close:
                atexit.register(close)
            _runners[kind] = runner
        return _runners[kind]
