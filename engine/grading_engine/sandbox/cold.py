"""One fresh sandbox per job: a zygote warmed for that job's harness only.

The slow, simple path (a Python start and `import torch` per grade, ~2-4 s):
nothing is shared between jobs at all. It is built exactly as a warm pool
is (userns + bwrap zygote, one slot forked from it), so there is one
sandbox construction to trust; the zygote loads only the one harness the
job needs and is gone after it. Used where a warm pool is not worth its
memory (the `grade` management command, an exercise saved in the admin)
and as the baseline the benchmark compares the pool with.

The job's clock starts when the slot has the job, not at bwrap: Python,
torch and the harness's reference models load before it, so a cold grade
measures the same work as a warm one (exercise time budgets rely on this).
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

from grading_engine.runner import ChildOutcome
from grading_engine.sandbox import bwrap, probe
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.slot_job import (
    SlotWorker,
    WorkerDied,
    ended_outcome,
    run_on_slot,
)
from grading_engine.sandbox.slots import SlotSet, kill_uid
from grading_engine.sandbox.staging import SANDBOX_TIKTOKEN
from grading_engine.sandbox.zygote_handle import Zygote

COLD_UID_BASE = bwrap.UID_BASE + 100


def sandbox_job(job: dict) -> tuple[dict, str | None]:
    """The job as the sandbox sees it: tiktoken files at their bound path."""
    host_dir = job.get("tiktoken_cache_dir")
    if not host_dir:
        return job, None
    if not bwrap.isolated():
        return job, str(host_dir)  # degraded: the child sees host paths
    return {**job, "tiktoken_cache_dir": SANDBOX_TIKTOKEN}, str(host_dir)


def _preload_for(job: dict) -> str:
    harness = job.get("harness")
    if isinstance(harness, str) and harness.replace("-", "").isalnum():
        return harness
    return "none"


class SandboxRunner:
    """Run each job in its own cold sandbox (a `runner.Runner`)."""

    def __init__(
        self,
        *,
        limits: Limits | None = None,
        allow_degraded: bool = False,
        concurrency: int = 2,
        uid_base: int = COLD_UID_BASE,
        startup_timeout: float = 60.0,
    ):
        self.startup_timeout = startup_timeout
        found = probe.require(allow_degraded=allow_degraded)
        self.limits = limits or Limits()
        if probe.missing_required(found):
            self.limits = dataclasses.replace(
                self.limits, require_seccomp=found.get("seccomp") is True
            )
        self.protections = found
        self.slots = SlotSet(
            concurrency, uid_base=uid_base, name="cold", limits=self.limits
        )
        self.zygote_slots = SlotSet(
            concurrency, uid_base=uid_base, name="cold-zygote", limits=self.limits
        )

    def run(self, job: dict, *, timeout: float, cancel=None, slow=None) -> ChildOutcome:
        with self.slots.checkout() as slot, self.zygote_slots.checkout() as home:
            return self._run(slot, home, job, timeout, cancel, slow)

    def close(self) -> None:
        self.slots.remove()
        self.zygote_slots.remove()

    def _run(self, slot, home, job: dict, timeout: float, cancel, slow):
        job, tiktoken_dir = sandbox_job(job)
        zygote = Zygote(
            slot=home,
            slot_uids=[slot.uid] if slot.uid is not None else [],
            limits=self.limits,
            tiktoken_dir=tiktoken_dir,
            preload=_preload_for(job),
            start_timeout=self.startup_timeout,
        )
        # The zygote dies with the thread that spawned it (--die-with-parent):
        # a thread of its own that lives exactly as long as this job.
        spawner = ThreadPoolExecutor(1, thread_name_prefix="cold-sandbox")
        worker: SlotWorker | None = None
        try:
            zygote.start(spawner)
            worker = zygote.spawn(slot)
            return run_on_slot(
                slot, worker, job, timeout, self.limits, cancel=cancel, slow=slow
            )
        except WorkerDied as exc:
            return ended_outcome(f"sandbox worker died ({exc})")
        finally:
            if worker is not None:
                worker.stop()
            zygote.stop()
            spawner.shutdown()
            if slot.uid is not None:
                kill_uid(slot.uid)  # anything that slipped out of the sandbox
            if slot.cgroup is not None:
                slot.cgroup.kill_all()
