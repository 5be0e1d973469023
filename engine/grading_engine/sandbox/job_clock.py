"""A job's time budget, counted in the CPU time its process used.

A wall-clock budget judges the machine as much as the code: at a deadline,
with both cores busy, a right answer that needs 0.2 s of CPU can take 1.5 s
of wall time and be told "time limit". The budget is therefore CPU seconds,
read from the job's own process clock (every thread of it, as the kernel
counts them) while it runs. A wall-clock backstop, a few times the budget,
still stops a job that sleeps or waits for something that never comes.
Time the job spent ready to run but kept off every core (the kernel's
run-queue wait) is not waiting: the backstop moves by it, up to twice its
length (wall_limit), so a loop on a busy machine is still stopped by its CPU
budget and told so, not blamed for waiting.

The clock also says when a job is slow: once it has used `Slow.after` CPU
seconds (a right answer is done by then) it drops to the lowest priority
and the scheduler is told; a job that has merely waited its whole budget
on the wall clock is reported slow without being demoted (it holds a slot,
not the CPU).
"""

from __future__ import annotations

import os
import time

from grading_engine.runner import Slow

LOWEST_PRIORITY = 19
# A grade's session (its autogroup) weighs this much less than a session at
# nice 0, such as a web process's: at a deadline the pages and quiz saves
# come first, grades take the rest of the CPU. 0 leaves grades level.
JOB_SESSION_NICE = int(os.environ.get("GRADER_JOB_SESSION_NICE", "5"))
POLL_MIN = 0.005  # seconds between reads of the clock, at most and at least
POLL_MAX = 0.1
BACKSTOP_FACTOR = 3
BACKSTOP_EXTRA = 5.0


def wall_backstop(budget: float) -> float:
    """Wall seconds a job with `budget` CPU seconds may take before it is stopped.

    Three times the budget, and at least five seconds more: a job that gets a
    third of a core on a busy machine still finishes, and one that waits on
    nothing is stopped in bounded time.
    """
    return max(BACKSTOP_FACTOR * budget, budget + BACKSTOP_EXTRA)


def wall_limit(budget: float) -> float:
    """The latest a job with `budget` CPU seconds may run: its backstop,
    moved by the time the job was kept from a core, at most twice as long.
    A grading lease must outlast this (config.settings)."""
    return 2 * wall_backstop(budget)


def run_queue_wait(pid: int) -> float | None:
    """Seconds the most-delayed thread of `pid` has waited for a core while
    ready to run (/proc/PID/task/TID/schedstat, second field); None when the
    kernel does not say or the process is gone."""
    longest = None
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                waited = int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            continue
        longest = waited if longest is None else max(longest, waited)
    return longest


def process_cpu_clock(pid: int) -> int:
    """The clock id of process `pid`'s CPU time, all threads (CPUCLOCK_SCHED).

    What glibc's clock_getcpuclockid computes; Python has no wrapper for it.
    Reading another process's CPU clock needs no privilege.
    """
    return ((~pid) << 3) | 2


class JobClock:
    """Reads one running job's CPU time and says when a limit is reached."""

    def __init__(
        self, pid: int | None, *, budget: float, start: float, slow: Slow | None
    ):
        self.pid = pid
        self.budget = budget
        self.start = start
        self.limit = start + wall_limit(budget)
        # Run-queue wait before the job's code began (its start-up) is not
        # the job's: the backstop moves only by what comes after.
        self._queued_before = None if pid is None else run_queue_wait(pid)
        self.queued = 0.0  # seconds kept from a core since then, as last read
        self.slow = slow
        self.told = slow is None
        self.cpu = 0.0  # seconds, as last read
        self._clock = None if pid is None else process_cpu_clock(pid)
        self._cores = max(os.cpu_count() or 1, 1)
        if JOB_SESSION_NICE:
            session_nice(pid, JOB_SESSION_NICE)

    @property
    def backstop(self) -> float:
        """When a job that is not using its CPU time is stopped: the
        backstop, moved by the time it was kept from a core, up to the limit."""
        return min(self.start + wall_backstop(self.budget) + self.queued, self.limit)

    def read(self) -> float | None:
        """CPU seconds the job has used; None once its process is gone.

        Without a pid (it could not be learned) the wall clock stands in,
        so the job is held to its budget in wall time as before.
        """
        if self._clock is None:
            return time.monotonic() - self.start
        try:
            return time.clock_gettime(self._clock)
        except OSError:
            return None

    def next_check(self, now: float) -> float:
        """When to read the clock next: before the job can cross a limit."""
        targets = [self.budget] + ([] if self.told else [self.slow.after])
        cpu_left = min(targets) - self.cpu
        # The job's threads can use every core at once.
        wait = min(max(cpu_left / self._cores, POLL_MIN), POLL_MAX)
        wall_marks = [self.backstop] + ([] if self.told else [self.start + self.budget])
        # A mark already passed (crossed since the last check) is not waited
        # for: the next read, at once, finds it.
        return min([now + wait] + [mark for mark in wall_marks if mark > now])

    def check(self, now: float) -> str | None:
        """ "cpu", "timeout" or "busy" (the limit of a backstop moved for a
        busy machine) when the job must stop; None while it may run."""
        used = self.read()
        if used is None:
            return None  # it ended: the worker is about to report that
        self.cpu = used
        if used >= self.budget:
            return "cpu"
        if now >= self.backstop:
            self._read_queue()
            if now >= self.backstop:
                return "busy" if self.queued and now >= self.limit else "timeout"
        if not self.told:
            if used >= self.slow.after:
                self.told = True
                demote(self.pid)
                self.slow.notify()
            elif now >= self.start + self.budget:
                # It has waited as long as its budget: say so, so another
                # grade may start, but it uses no CPU worth demoting.
                self.told = True
                self.slow.notify()
        return None

    def _read_queue(self) -> None:
        """Update `queued`, the time the job was ready to run but waited for
        a core, where the kernel says (the backstop moves by it)."""
        if self._queued_before is None:
            return
        waited = run_queue_wait(self.pid)
        if waited is not None:
            self.queued = max(waited - self._queued_before, 0.0)


def demote(pid: int | None) -> None:
    """The lowest CPU priority for every thread of `pid`, and for its session.

    Linux keeps a nice value per thread, and with autogroup scheduling (the
    default on desktop and many server kernels) nice only orders threads
    within one session: the job is a session of its own (setsid), so its
    autogroup's nice is what weighs it against other grades. The job cannot
    raise either back: that needs CAP_SYS_NICE, and its RLIMIT_NICE is 0.
    """
    if pid is None:
        return
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            os.setpriority(os.PRIO_PROCESS, int(tid), LOWEST_PRIORITY)
    except OSError:
        return  # it just ended
    session_nice(pid, LOWEST_PRIORITY)


def session_nice(pid: int | None, nice: int) -> None:
    """The nice value of `pid`'s session (its autogroup), where the kernel
    schedules by session; the threads' own nice values are left alone."""
    if pid is None:
        return
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
    except OSError:
        pass  # no autogroup scheduling here, or the job just ended
