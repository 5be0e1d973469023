"""The grading process's handle on a zygote: start it, fork slots, stop it.

The zygote itself (`grading_engine.sandbox.zygote`) runs inside bwrap; this
side starts it through `bwrap.spawn_zygote`, asks it for slot workers over
its control socket, and moves each new worker into its slot's cgroup
before the worker's first job.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from grading_engine.sandbox import boot as boot_entry
from grading_engine.sandbox import bwrap
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.slot_job import SlotWorker, WorkerDied, receive_by
from grading_engine.sandbox.slots import kill_uid
from grading_engine.sandbox.staging import prepare_layout
from grading_engine.sandbox.worker import receive, send

SPAWN_TIMEOUT = 30.0  # seconds a new slot gets to report ready


def limits_arg(limits: Limits) -> str:
    return json.dumps(dataclasses.asdict(limits))


class Zygote:
    """The parent's handle on a zygote: start it, fork slots from it, stop it."""

    def __init__(
        self,
        *,
        slot: bwrap.Slot,  # the zygote's own uid and cgroup
        slot_uids: list[int],
        limits: Limits,
        tiktoken_dir: str | None,
        preload: str,
        start_timeout: float,
    ):
        self.slot = slot
        self.slot_uids = slot_uids
        self.limits = limits
        self.tiktoken_dir = tiktoken_dir
        self.preload = preload
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self._log = tempfile.TemporaryFile()
        self._lock = threading.Lock()  # one spawn request at a time

    def start(self, spawner: ThreadPoolExecutor) -> Zygote:
        """Start (from `spawner`'s one thread: --die-with-parent) and await ready."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        boot = boot_entry.argv(
            "zygote", str(child.fileno()), limits_arg(self.limits), self.preload
        )
        layout = prepare_layout()
        args = bwrap.command(
            layout, boot, limits=self.limits, tiktoken_dir=self.tiktoken_dir
        )
        env = bwrap.unsandboxed_environment(layout, self.tiktoken_dir)
        future = spawner.submit(
            bwrap.spawn_zygote,
            args,
            zygote_uid=self.slot.uid,
            slot_uids=self.slot_uids,
            cgroup=self.slot.cgroup,
            limits=self.limits,
            env=env,
            pass_fds=(child.fileno(),),
            stderr=self._log.fileno(),
        )
        try:
            self.process = future.result()
        except BaseException:
            parent.close()
            raise
        finally:
            child.close()
        self.sock = parent
        parent.settimeout(self.start_timeout)
        try:
            message, _ = receive(parent)
        except (TimeoutError, OSError):
            message = None
        parent.settimeout(None)
        if not message or not message.get("ready"):
            detail = (message or {}).get("error") or self.log_tail()
            self.stop()
            raise RuntimeError(f"sandbox zygote failed to start:\n{detail}")
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self) -> str:
        self._log.seek(0)
        return self._log.read()[-2000:].decode("utf-8", errors="replace")

    def spawn(self, slot: bwrap.Slot) -> SlotWorker:
        """Fork a slot worker for `slot`, move it into the slot's cgroup."""
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # The kernel then stamps every message with its sender's host pid.
        parent.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        scratch = None
        if slot.uid is None:
            # Degraded, no sandbox: the worker empties its TMPDIR after every
            # job, so it must be a directory of its own, never the host's /tmp.
            scratch = tempfile.mkdtemp(prefix="grader-scratch-")
        try:
            with self._lock:
                if not self.alive():
                    raise WorkerDied("the zygote is gone")
                try:
                    send(
                        self.sock,
                        {"spawn": {"uid": slot.uid, "scratch": scratch}},
                        [child.fileno()],
                    )
                finally:
                    child.close()
                self.sock.settimeout(SPAWN_TIMEOUT)
                try:
                    reply, _ = receive(self.sock)
                except (TimeoutError, OSError) as exc:
                    raise WorkerDied(f"the zygote did not answer: {exc}") from None
                finally:
                    self.sock.settimeout(None)
            if not reply or not reply.get("spawned"):
                raise WorkerDied((reply or {}).get("error") or "the zygote is gone")
            return self._await_ready(parent, slot, scratch)
        except BaseException:
            parent.close()
            if scratch is not None and os.path.isdir(scratch):
                os.rmdir(scratch)
            raise

    def _await_ready(
        self, sock: socket.socket, slot: bwrap.Slot, scratch: str | None
    ) -> SlotWorker:
        received = receive_by(sock, time.monotonic() + SPAWN_TIMEOUT)
        if received is None:
            raise WorkerDied("the new slot did not report ready")
        message, pid = received
        if not message.get("ready") or pid is None:
            raise WorkerDied(f"the new slot failed: {message.get('error', '?')}")
        worker = SlotWorker(sock, pid, scratch)
        if slot.cgroup is not None:
            try:
                slot.cgroup.attach(pid)  # before its first job, which inherits it
            except OSError:
                worker.stop()
                raise
        return worker

    def stop(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
            self.process.wait()
        if self.slot.uid is not None:
            kill_uid(self.slot.uid)
        self._log.close()
