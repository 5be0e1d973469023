"""A busy machine on demand: one CPU-bound process per core, for tests that
must hold whatever a deadline's load does to the grader."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

HOG = "import sys\nprint('hot', flush=True)\nwhile True:\n    pass\n"


@contextlib.contextmanager
def cpu_hogs(count: int | None = None):
    """Run `count` busy loops (default: one per core) at normal priority.

    Each is a session of its own, as another user's program would be, so
    the scheduler weighs it like any other job. Returns once all of them
    are running; they are killed on exit.
    """
    count = count or os.cpu_count() or 1
    hogs = [
        subprocess.Popen(  # noqa: S603 - our own interpreter and code
            [sys.executable, "-c", HOG],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        for _ in range(count)
    ]
    try:
        for hog in hogs:
            assert hog.stdout.readline() == b"hot\n"
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
            hog.stdout.close()
