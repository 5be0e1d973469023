"""The client's local runner: children forked from a warm process, each in its
own session, killed whole at the deadline, their output captured and capped."""

from __future__ import annotations

import hashlib
import time

import pytest
from course import local
from course.forkrunner import OUTPUT_CAP, ForkRunner

pytestmark = pytest.mark.slow

EXERCISE = {
    "slug": "block-param-count",
    "harness": "block-param-count",
    "entry_point": "block_param_count",
    "time_budget": {"seconds": 1},
}
RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def runner(monkeypatch, tmp_path):
    """A fresh fork server, and EXERCISE's local-check bundle saved as `course
    get` saves it (the server's values for its visible cases)."""
    from course import store
    from grading_engine.learner_edition import bundle

    blob = bundle(EXERCISE["harness"])
    monkeypatch.setenv("COURSE_CONFIG_DIR", str(tmp_path / "config"))
    store.local_check_save(EXERCISE["slug"], blob)
    monkeypatch.setitem(
        EXERCISE, "local_check", {"sha256": hashlib.sha256(blob).hexdigest()}
    )
    fresh = ForkRunner()
    monkeypatch.setattr("course.forkrunner._runner", fresh)
    monkeypatch.setattr(local, "LOCAL_MIN_TIMEOUT", 3.0)
    yield fresh
    if fresh.server:
        fresh.server.kill()
        fresh.server.wait()


def test_a_right_answer_passes_and_its_output_is_its_own(runner, tmp_path):
    code = (
        "import sys\nprint('to stdout')\nprint('to stderr', file=sys.stderr)\n" + RIGHT
    )
    verdict = local.check(EXERCISE, code)
    assert verdict["status"] == "passed", verdict
    assert verdict["stdout"] == "to stdout\n"
    assert verdict["stderr"] == "to stderr\n"
    started = time.monotonic()
    assert local.check(EXERCISE, RIGHT)["status"] == "passed"
    assert time.monotonic() - started < 2.5  # forked warm: no torch import


def test_a_loop_is_stopped_with_everything_it_started(runner, tmp_path):
    marker = tmp_path / "grandchild.pid"
    code = (
        "import os, subprocess, sys\n"
        "sleeper = 'import time; time.sleep(60)'\n"
        "child = subprocess.Popen([sys.executable, '-c', sleeper])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        "while True:\n    pass\n"
    )
    verdict = local.check(EXERCISE, code)
    assert verdict["status"] == "error"
    assert "took longer than 3 s" in verdict["checks"][0]["message"]
    pid = int(marker.read_text())
    time.sleep(0.5)
    assert not alive(pid)
    assert local.check(EXERCISE, RIGHT)["status"] == "passed"  # the server lives on


def test_exit_and_floods_are_reported_not_fatal(runner):
    verdict = local.check(EXERCISE, "import os\nos._exit(0)\n")
    assert verdict["status"] == "error"
    assert "do not call exit()" in verdict["checks"][0]["message"]
    flood = local.check(EXERCISE, "print('x' * 1_000_000)\n" + RIGHT)
    assert flood["status"] == "passed"
    assert flood["stdout"].endswith(f"[output truncated at {OUTPUT_CAP:,} bytes]")


def test_code_that_kills_the_fork_server_gets_one_line_and_a_fresh_one(runner):
    from course.errors import CourseError

    with pytest.raises(CourseError, match="stopped; run the check again"):
        local.check(
            EXERCISE, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
        )
    assert local.check(EXERCISE, RIGHT)["status"] == "passed"
