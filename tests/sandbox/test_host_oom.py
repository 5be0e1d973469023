"""A job the host's OOM killer takes is not its learner's fault.

The kernel counts an OOM kill in the slot's cgroup whether it came from the
slot's own limit or from the host running out of memory, and both were
reported as "killed: memory limit". Now the slot's own limit must have been
reached for that; a SIGKILL while the host's OOM killer fired (its counter
in /proc/vmstat rose) and the slot stayed under its limit runs the job once
more, like a zygote's death, and a second one says it was not their code.

The kills here are real SIGKILLs of the running job from outside, as the
kernel's would be; only the host's counter is a file of the test's, which
it raises as the kernel would (an OOM on the test machine is not safe).
"""

from __future__ import annotations

import os
import signal
import threading

import pytest
from grading_engine.sandbox import cgroups
from grading_engine.sandbox.slots import HOST_OUT_OF_MEMORY, killed_reason, uid_pids

from tests.pipeline.conftest import wait_for
from tests.sandbox.conftest import RIGHT, messages, run_attack

pytestmark = pytest.mark.sandbox
SLOW_RIGHT = "import time\ntime.sleep(2)\n" + RIGHT


def running_jobs(pool) -> list[int]:
    """Host pids of the jobs running now (a slot worker's children)."""
    jobs = []
    for slot in pool.slots.slots:
        pids = set(uid_pids(slot.uid))
        for pid in pids:
            try:
                with open(f"/proc/{pid}/status") as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
            except OSError:
                continue
            if int(fields["PPid"]) in pids:
                jobs.append(pid)
    return jobs


@pytest.fixture
def host(tmp_path, monkeypatch):
    """The host's OOM kill counter, and a kill of a running job as its
    OOM killer would do it."""
    counter = tmp_path / "vmstat"
    counter.write_text("oom_kill 0\n")
    monkeypatch.setattr(cgroups, "VMSTAT", str(counter))
    killed: list[int] = []

    def oom_kill(pool) -> None:
        """Kill the next job (one not killed before)."""
        fresh = lambda: [p for p in running_jobs(pool) if p not in killed]  # noqa: E731
        job = wait_for(fresh, timeout=60, what="a job to kill")[0]
        killed.append(job)
        counter.write_text(f"oom_kill {len(killed)}\n")
        os.kill(job, signal.SIGKILL)

    return oom_kill


def grade_in_background(pool, code: str) -> tuple[threading.Thread, list]:
    verdicts = []
    job = threading.Thread(
        target=lambda: verdicts.append(run_attack(pool, code, timeout=30))
    )
    job.start()
    return job, verdicts


def test_a_job_the_host_kills_once_runs_again_and_passes(pool, host):
    job, verdicts = grade_in_background(pool, SLOW_RIGHT)
    host(pool)
    job.join(timeout=120)
    assert verdicts and verdicts[0].status == "passed", messages(verdicts[0])


def test_a_job_the_host_kills_twice_is_an_error_that_is_not_the_learners(pool, host):
    job, verdicts = grade_in_background(pool, SLOW_RIGHT)
    host(pool)
    host(pool)  # the second run
    job.join(timeout=120)
    verdict = verdicts[0]
    assert verdict.status == "error"
    assert HOST_OUT_OF_MEMORY in messages(verdict)
    assert "memory limit" not in messages(verdict)


def test_a_job_that_kills_itself_is_its_own_doing(pool, host):
    verdict = run_attack(
        pool, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n" + RIGHT
    )
    assert verdict.status == "error"
    assert "SIGKILL" in messages(verdict)
    assert HOST_OUT_OF_MEMORY not in messages(verdict)


@pytest.mark.parametrize(
    ("memory_killed", "host_killed", "reason"),
    [
        (True, False, "memory limit"),
        (True, True, "memory limit"),  # at its own limit: the job's
        (False, True, HOST_OUT_OF_MEMORY),
        (False, False, None),
    ],
)
def test_only_the_slots_own_limit_is_a_memory_limit(memory_killed, host_killed, reason):
    assert (
        killed_reason(
            why="eof",
            exit_code=-signal.SIGKILL,
            memory_killed=memory_killed,
            host_killed=host_killed,
        )
        == reason
    )
