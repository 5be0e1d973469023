"""The job clock's wall-clock backstop moves by the time a busy machine kept
the job from a core, and only by that (grading_engine.sandbox.job_clock)."""

from __future__ import annotations

import os

import pytest
from grading_engine.sandbox import job_clock
from grading_engine.sandbox.job_clock import (
    JobClock,
    run_queue_wait,
    wall_backstop,
    wall_limit,
)

BUDGET = 1.5  # CPU seconds: a backstop of 6.5 s, a limit of 13 s


@pytest.fixture
def queue(monkeypatch):
    """The run-queue wait the clock reads, set by the test (seconds)."""
    waited = {"seconds": 0.0}
    monkeypatch.setattr(job_clock, "run_queue_wait", lambda pid: waited["seconds"])
    return waited


def clock_of_a_job_that_used(cpu: float) -> JobClock:
    clock = JobClock(os.getpid(), budget=BUDGET, start=0.0, slow=None)
    clock.read = lambda: cpu  # this process stands in for the job
    return clock


def test_this_kernel_reports_a_run_queue_wait():
    waited = run_queue_wait(os.getpid())
    assert waited is not None and waited >= 0


def test_a_job_that_waits_is_stopped_at_its_backstop(queue):
    clock = clock_of_a_job_that_used(0.01)
    assert clock.check(wall_backstop(BUDGET) - 0.1) is None
    assert clock.check(wall_backstop(BUDGET)) == "timeout"


def test_time_kept_from_a_core_moves_the_backstop_and_cpu_still_decides(queue):
    clock = clock_of_a_job_that_used(0.9)
    queue["seconds"] = 4.0  # of the first 6.5 s, 4 were spent waiting for a core
    assert clock.check(wall_backstop(BUDGET)) is None
    assert clock.backstop == pytest.approx(wall_backstop(BUDGET) + 4.0)
    clock.read = lambda: BUDGET  # it gets its CPU time after all
    assert clock.check(wall_backstop(BUDGET) + 1.0) == "cpu"


def test_a_moved_backstop_ends_at_the_limit_and_says_the_machine_was_busy(queue):
    clock = clock_of_a_job_that_used(0.9)
    queue["seconds"] = 100.0  # starved throughout
    assert clock.check(wall_backstop(BUDGET)) is None
    assert clock.backstop == wall_limit(BUDGET)
    assert clock.check(wall_limit(BUDGET)) == "busy"


def test_a_job_that_waits_after_a_little_queueing_still_ends_as_waiting(queue):
    clock = clock_of_a_job_that_used(0.01)
    queue["seconds"] = 0.5
    assert clock.check(wall_backstop(BUDGET)) is None  # moved by 0.5 s
    assert clock.check(wall_backstop(BUDGET) + 0.5) == "timeout"


def test_a_backstop_crossed_since_the_last_check_is_read_at_once(queue):
    """Between a check and the next wait the wall clock can pass every mark
    (a busy machine); the wait is then no longer than a poll, never an error."""
    clock = clock_of_a_job_that_used(0.01)
    now = wall_limit(BUDGET) + 1.0
    assert now < clock.next_check(now) <= now + job_clock.POLL_MAX
    assert clock.check(now) == "timeout"
