"""The pool's slots are forks of one warm zygote: shared memory, cancel, recovery."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from grading_engine.runner import CancelToken
from grading_engine.sandbox.slots import uid_pids

from tests.pipeline.conftest import wait_for
from tests.sandbox.conftest import (
    RIGHT,
    assert_grader_still_works,
    messages,
    run_attack,
)

pytestmark = pytest.mark.sandbox
LOOP = """
def tie_weights(model):
    while True:
        pass
"""


def smaps_rollup(pid: int) -> dict[str, int]:
    found = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                found[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return found


def test_slots_share_the_zygotes_models_instead_of_holding_copies(pool):
    assert_grader_still_works(pool)  # each slot has run a job since it forked
    for pid in pool.worker_pids().values():
        memory = smaps_rollup(pid)
        private = memory["Private_Clean"] + memory["Private_Dirty"]
        # It maps torch and GPT-2 small (well over 1 GB) but owns little of it.
        assert memory["Rss"] > 1024**3
        assert private < memory["Rss"] / 4, memory


def test_each_slot_is_pid_1_of_its_own_namespace_and_sees_no_other(pool):
    seen = []
    for _ in range(2):
        verdict = run_attack(
            pool,
            """
            import os
            def tie_weights(model):
                pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
                mine = [1, os.getpid()]
                raise RuntimeError(f"alone={pids == mine} parent={os.getppid()}")
            """,
        )
        seen.append(messages(verdict))
    for text in seen:
        # the slot worker (1) and the job itself; no zygote, no other slot
        assert "alone=True" in text and "parent=1" in text, text


def test_cancel_stops_a_running_job_at_once_and_keeps_the_slot(pool):
    workers = pool.worker_pids()
    token = CancelToken()
    verdicts = []
    job = threading.Thread(
        target=lambda: verdicts.append(run_attack(pool, LOOP, timeout=30, cancel=token))
    )
    job.start()
    time.sleep(1.0)
    cancelled_at = time.monotonic()
    token.set()
    job.join(timeout=20)
    stopped_in = time.monotonic() - cancelled_at
    token.close()
    assert verdicts and verdicts[0].status == "cancelled", messages(verdicts[0])
    assert stopped_in < 10  # far below the 30 s budget it was given
    assert pool.worker_pids() == workers  # the job died, not its slot
    assert_grader_still_works(pool)


def test_a_cancel_before_the_job_starts_runs_nothing(pool):
    token = CancelToken()
    token.set()
    verdict = run_attack(pool, RIGHT, cancel=token)
    token.close()
    assert verdict.status == "cancelled"


def slots_running_a_job(pool) -> int:
    """Slots whose worker has forked a job: two processes of the slot's uid."""
    return sum(len(uid_pids(slot.uid)) >= 2 for slot in pool.slots.slots)


def test_a_dead_zygote_is_replaced_and_its_running_job_runs_again(pool):
    """Killing the zygote takes its slots with it a moment later: the job
    running on one (here, sleeping before it answers) was not its learner's
    doing, so it runs again on a slot of the new zygote and passes; then
    both slots grade again. (A kill while idle flaked once in a busy run: a
    grade started on a slot that was about to die, and ended in an error.)"""
    old_zygote = pool.zygote.process.pid
    verdicts = []
    job = threading.Thread(
        target=lambda: verdicts.append(
            run_attack(pool, "import time\ntime.sleep(2)\n" + RIGHT, timeout=30)
        )
    )
    job.start()
    wait_for(lambda: slots_running_a_job(pool), timeout=60, what="the job to start")
    os.killpg(old_zygote, signal.SIGKILL)  # its pid namespace, slots included
    job.join(timeout=120)
    assert verdicts and verdicts[0].status == "passed", messages(verdicts[0])
    assert pool.zygote.process.pid != old_zygote
    assert pool.zygote_restarts >= 1
    assert_grader_still_works(pool)


def autogroup_on() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def test_a_job_that_used_its_expected_cpu_time_is_demoted_and_reported(pool):
    """Slow.after is CPU time: past it, every thread drops to nice 19 and so
    does the job's session (its autogroup), which is what weighs it against
    other grades when autogroup scheduling is on; the job cannot undo it."""
    from grading_engine.runner import Slow

    told = []
    verdict = run_attack(
        pool,
        """
        import os, time
        def tie_weights(model):
            end = time.process_time() + 1.0
            while time.process_time() < end:
                pass
            try:
                with open("/proc/self/autogroup") as f:
                    group = f.read().split()[-1]
            except OSError:
                group = "none"
            try:
                os.setpriority(os.PRIO_PROCESS, 0, 0)
                raised = "yes"
            except OSError:
                raised = "no"
            raise RuntimeError(
                f"nice={os.getpriority(os.PRIO_PROCESS, 0)} group={group} "
                f"raised={raised}"
            )
        """,
        slow=Slow(0.5, lambda: told.append(time.monotonic())),
    )
    text = messages(verdict)
    assert "nice=19" in text and "raised=no" in text, text
    assert ("group=19" if autogroup_on() else "group=") in text, text
    assert len(told) == 1
    verdict = run_attack(pool, RIGHT, slow=Slow(5.0, lambda: told.append(0)))
    assert verdict.status == "passed" and len(told) == 1  # a fast job: not told


def test_a_job_that_waits_its_whole_budget_is_reported_but_keeps_its_priority(pool):
    """Sleeping uses no CPU: the scheduler hears the slot is held, but the
    job is not demoted, and the budget it never used does not stop it."""
    from grading_engine.runner import Slow

    told = []
    verdict = run_attack(
        pool,
        """
        import os, time
        def tie_weights(model):
            time.sleep(1.2)  # once per case: three cases, 3.6 s in all
            raise RuntimeError(f"nice={os.getpriority(os.PRIO_PROCESS, 0)}")
        """,
        timeout=1.0,
        slow=Slow(0.5, lambda: told.append(time.monotonic())),
    )
    text = messages(verdict)
    assert "nice=0" in text, text  # it ran to its end: not stopped at 1 s
    assert len(told) == 1


HELD = """
import time
def tie_weights(model):
    time.sleep(60)
"""


def test_closing_the_pool_while_it_grades_ends_that_grade_and_restarts_nothing():
    """A worker's shutdown (atexit) may close the pool while a grade runs or
    a slot restarts: close() must neither fail ("dictionary changed size")
    nor leave a slot forked again behind it."""
    from grading_engine.sandbox import WarmPool

    pool = WarmPool(2).start()
    uids = pool.uids()
    verdicts = []
    graders = [
        threading.Thread(
            target=lambda: verdicts.append(run_attack(pool, HELD, timeout=30))
        )
        for _ in range(2)
    ]
    for grader in graders:
        grader.start()

    deadline = time.monotonic() + 60
    while slots_running_a_job(pool) < 2:
        assert time.monotonic() < deadline, "the two jobs never started"
        time.sleep(0.05)
    pool.close()
    for grader in graders:
        grader.join(timeout=30)
        assert not grader.is_alive()
    assert [v.status for v in verdicts] == ["error", "error"]
    assert pool.zygote is None and pool.worker_pids() == {}
    assert all(uid_pids(uid) == [] for uid in uids)
    with pytest.raises(RuntimeError, match="after close"):
        run_attack(pool, RIGHT)
