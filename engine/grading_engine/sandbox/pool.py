"""A warm pool: slots forked from one preloaded zygote, one fresh fork per grade.

The zygote (`grading_engine.sandbox.zygote`) imports torch and builds the
reference models once, inside bubblewrap; every slot is its copy-on-write
child with namespaces, a /tmp and a uid of its own, so N slots share one
copy of torch and the models. A grade costs a fork of the slot (~0.1 s),
not a Python start and an `import torch` (~2 s). The fork is the isolation
between learners: the child dies after its grade, so nothing it patched
reaches the next one.

A slot whose worker died (killed, out of memory, a crash) is forked again
from the zygote on its next use (milliseconds); the job that was running
reports an error. If the zygote itself is gone, the pool starts a new one.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from grading_engine.runner import CANCELLED, ChildOutcome
from grading_engine.sandbox import bwrap, probe
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.slot_job import (
    SlotWorker,
    WorkerDied,
    ended_outcome,
    run_on_slot,
)
from grading_engine.sandbox.slots import HOST_OUT_OF_MEMORY, SlotSet, kill_uid
from grading_engine.sandbox.staging import SANDBOX_TIKTOKEN
from grading_engine.sandbox.zygote_handle import Zygote

log = logging.getLogger("grading_engine.sandbox")


class WarmPool:
    """Slots forked from one warm zygote (a grading_engine.runner.Runner)."""

    def __init__(
        self,
        size: int = 2,
        *,
        limits: Limits | None = None,
        allow_degraded: bool = False,
        tiktoken_cache_dir: str | None = None,  # default: the reference's cache
        uid_base: int = bwrap.UID_BASE,
        start_timeout: float = 180.0,
        preload: str = "all",
        name: str = "pool",
    ):
        self.size = size
        self.limits = limits or Limits()
        self.allow_degraded = allow_degraded
        self.tiktoken_cache_dir = tiktoken_cache_dir
        self.uid_base = uid_base
        self.start_timeout = start_timeout
        self.preload = preload
        self.name = name
        self.protections: dict[str, bool | str] = {}
        self.slots: SlotSet | None = None
        self.zygote_slots: SlotSet | None = None
        self.zygote: Zygote | None = None
        self._workers: dict[int, SlotWorker] = {}
        self._zygote_lock = threading.Lock()
        # Held while the worker table changes: close() may run (atexit, a
        # worker's shutdown) while a grading thread restarts a slot.
        self._table_lock = threading.RLock()
        self._closing = False
        # How many times a dead zygote was replaced: a slot that dies while
        # this moves died with its zygote, not by its job (WarmPool.run).
        self.zygote_restarts = 0
        # --die-with-parent ties a sandbox to the *thread* that started it,
        # so the zygote is always spawned from this one long-lived thread.
        self._spawner: ThreadPoolExecutor | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> WarmPool:
        """Probe, start the zygote, fork every slot; returns self."""
        if self.slots is not None:
            return self
        self._closing = False
        found = probe.require(allow_degraded=self.allow_degraded)
        self.protections = found
        if probe.missing_required(found):
            self.limits = dataclasses.replace(
                self.limits, require_seccomp=found.get("seccomp") is True
            )
        if self.tiktoken_cache_dir is None:
            self.tiktoken_cache_dir = _default_tiktoken_dir()
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="sandbox-spawner")
        try:
            self.zygote_slots = SlotSet(
                1, uid_base=self.uid_base, name=f"{self.name}-zygote",
                limits=self.limits,
            )  # fmt: skip
            self.slots = SlotSet(
                self.size, uid_base=self.uid_base, name=self.name, limits=self.limits
            )
            self._start_zygote()
            for slot in self.slots.slots:
                self._workers[slot.index] = self.zygote.spawn(slot)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Stop every slot and the zygote; safe while grades are running.

        A grade running now ends with an error outcome ("sandbox closed"),
        and no slot is restarted after this: a grading thread that loses
        its worker sees `_closing` and gives up instead of forking another.
        """
        with self._table_lock:
            self._closing = True
            workers = list(self._workers.values())
            self._workers.clear()
        for worker in workers:
            worker.stop()
        with self._zygote_lock:
            zygote, self.zygote = self.zygote, None
        if zygote is not None:
            zygote.stop()
        for slots in (self.slots, self.zygote_slots):
            if slots is not None:
                slots.remove()
        self.slots = self.zygote_slots = None
        if self._spawner is not None:
            self._spawner.shutdown()
            self._spawner = None

    def __enter__(self) -> WarmPool:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def worker_pids(self) -> dict[int, int]:
        """Slot index -> host pid of its worker (for monitoring)."""
        with self._table_lock:
            return {index: w.pid for index, w in self._workers.items()}

    def uids(self) -> list[int]:
        """The zygote's uid and every slot's (for memory accounting)."""
        slots = [*(self.zygote_slots.slots if self.zygote_slots else [])]
        slots += self.slots.slots if self.slots else []
        return [slot.uid for slot in slots if slot.uid is not None]

    # -- grading -----------------------------------------------------------

    def run(self, job: dict, *, timeout: float, cancel=None, slow=None) -> ChildOutcome:
        """Grade `job` on a free slot; `cancel` (a CancelToken) stops it early."""
        slots = self.slots
        if self._closing:
            raise RuntimeError("WarmPool.run after close()")
        if slots is None:
            raise RuntimeError("WarmPool.run before start()")
        with slots.checkout() as slot:
            for retry in (True, False):
                if cancel is not None and cancel.is_set():
                    return ended_outcome(CANCELLED)
                zygote_restarts = self.zygote_restarts
                try:
                    worker = self._workers.get(slot.index)
                    if worker is None or not worker.alive():
                        worker = self._restart(slot)
                        zygote_restarts = self.zygote_restarts  # before the job
                    outcome = run_on_slot(
                        slot, worker, self._sandbox_job(job), timeout, self.limits,
                        cancel=cancel, slow=slow,
                    )  # fmt: skip
                    if outcome.killed_reason == HOST_OUT_OF_MEMORY and retry:
                        # The host's fault, like a zygote's death: once more.
                        log.warning("sandbox slot %d: host OOM kill", slot.index)
                        continue
                    return outcome
                except WorkerDied as exc:
                    if self._closing:
                        return ended_outcome("sandbox closed")
                    log.warning("sandbox slot %d lost its worker: %s", slot.index, exc)
                    try:
                        self._restart(slot)
                    except Exception:  # the next job on this slot tries again
                        log.exception("sandbox slot %d failed to restart", slot.index)
                    # A slot dies with its zygote (a learner's job cannot
                    # reach it: another uid, outside the slot's pid
                    # namespace), and killing the zygote takes its slots
                    # with it a moment later, so a job can have started on
                    # a slot that was already doomed: that job is not its
                    # learner's doing, and it runs once more.
                    with_zygote = self.zygote_restarts != zygote_restarts
                    if (exc.job_started and not with_zygote) or not retry:
                        return ended_outcome(f"sandbox worker died ({exc})")
            raise AssertionError("unreachable")

    def _sandbox_job(self, job: dict) -> dict:
        host_dir = job.get("tiktoken_cache_dir")
        if not host_dir:
            return job
        if not bwrap.isolated():
            return job  # degraded: the child sees host paths
        if self.tiktoken_cache_dir and os.path.realpath(
            str(host_dir)
        ) == os.path.realpath(self.tiktoken_cache_dir):
            return {**job, "tiktoken_cache_dir": SANDBOX_TIKTOKEN}
        log.warning("job's tiktoken dir %s is not bound in the pool", host_dir)
        return {**job, "tiktoken_cache_dir": None}

    # -- slots -------------------------------------------------------------

    def _start_zygote(self) -> None:
        zygote = Zygote(
            slot=self.zygote_slots.slots[0],
            slot_uids=[s.uid for s in self.slots.slots if s.uid is not None],
            limits=self.limits,
            tiktoken_dir=self.tiktoken_cache_dir,
            preload=self.preload,
            start_timeout=self.start_timeout,
        )
        self.zygote = zygote.start(self._spawner)

    def _restart(self, slot: bwrap.Slot) -> SlotWorker:
        with self._table_lock:
            if self._closing:
                raise WorkerDied("the pool is closing")
            old = self._workers.pop(slot.index, None)
        if old is not None:
            old.stop()
        if slot.uid is not None:
            kill_uid(slot.uid)
        if slot.cgroup is not None:
            slot.cgroup.kill_all()
        with self._zygote_lock:
            if self._closing:
                raise WorkerDied("the pool is closing")
            if self.zygote is None or not self.zygote.alive():
                log.warning("sandbox zygote is gone: starting a new one")
                if self.zygote is not None:
                    self.zygote.stop()
                self._start_zygote()
                self.zygote_restarts += 1
            worker = self.zygote.spawn(slot)
        with self._table_lock:
            if self._closing:
                worker.stop()
                raise WorkerDied("the pool is closing")
            self._workers[slot.index] = worker
        log.info("sandbox slot %d restarted", slot.index)
        return worker


def _default_tiktoken_dir() -> str:
    """The host's tiktoken cache, installed now if it is not yet."""
    from grading_engine.reference.tokenizer import (
        default_cache_dir,
        install_tiktoken_cache,
    )

    return str(install_tiktoken_cache(default_cache_dir()))
