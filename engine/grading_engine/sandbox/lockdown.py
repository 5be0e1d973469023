"""The last trusted steps before learner code runs, shared by every sandbox mode.

`boot` (cold and probe modes) and `worker` (each forked warm job) both call
these, so they live apart from either and neither imports the other.
"""

from __future__ import annotations

import os

from grading_engine.harness.result_fd import RESULT_FD
from grading_engine.sandbox import seccomp
from grading_engine.sandbox.limits import Limits, set_job_rlimits

__all__ = ["RESULT_FD", "close_other_fds", "lock_down"]


def close_other_fds(keep: int) -> None:
    """Close every descriptor above `keep`: only stdio and the result stay."""
    os.closerange(keep + 1, os.sysconf("SC_OPEN_MAX"))


def lock_down(limits: Limits, cpu_seconds: int) -> None:
    """Rlimits, then seccomp; the last trusted step before learner code."""
    set_job_rlimits(limits, cpu_seconds=cpu_seconds)
    try:
        seccomp.install()
    except OSError:
        if limits.require_seccomp:
            raise
