"""The zygote: one warm process per pool that every slot forks from.

It runs inside bwrap as root of a user namespace whose uid map holds only
its own (unprivileged) uid and the slot uids (`bwrap.spawn_zygote`). It
imports torch and builds the reference models once, freezes them (huge
pages, `gc.freeze()`), and then only forks: each slot is a copy-on-write
child that shares those pages, so N slots cost about one model plus a few
MB each instead of N models.

A slot, before it ever sees a job, takes new mount, pid, network, ipc and
uts namespaces, mounts its own /tmp and /proc, drops to its uid (which
clears every capability), sets no_new_privs and becomes non-dumpable. It is
pid 1 of its pid namespace: its jobs cannot see the zygote or another slot,
cannot signal it, and die with it. The zygote never receives a job or
anything of one: only requests to spawn a slot, from the grading process.

Protocol on the zygote's control socket (SOCK_SEQPACKET, JSON):
  zygote -> parent  {"ready": true} | {"ready": false, "error": str}
  parent -> zygote  {"spawn": {"uid": int|null, "scratch": str|null}}
                    + fd [the slot's end of its own control socket]
  zygote -> parent  {"spawned": true} | {"spawned": false, "error": str}
The slot then speaks `grading_engine.sandbox.worker`'s protocol on its
socket, starting with {"ready": ...}.
"""

from __future__ import annotations

import os
import socket
import sys
import traceback

from grading_engine import gc_policy
from grading_engine.sandbox import namespaces as ns
from grading_engine.sandbox.limits import Limits, set_slot_rlimits
from grading_engine.sandbox.worker import (
    collapse_to_huge_pages,
    keep_only,
    receive,
    send,
    serve_slot,
)

SANDBOX_TMP = "/tmp"  # noqa: S108 - each slot mounts a private tmpfs here


def serve(control_fd: int, limits: Limits, preload: str) -> None:
    """Warm up, then spawn slots on request until the parent goes away."""
    keep_only(control_fd)
    sock = socket.socket(fileno=control_fd)
    try:
        warm(preload)
    except BaseException:  # noqa: BLE001 - the parent must hear why
        send(sock, {"ready": False, "error": traceback.format_exc()[-2000:]})
        return
    send(sock, {"ready": True})
    while True:
        request, fds = receive(sock, 1)
        if request is None:
            return
        spec = request.get("spawn")
        if not isinstance(spec, dict) or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            send(sock, {"spawned": False, "error": "malformed request"})
            continue
        send(sock, spawn_slot(sock, fds[0], spec, limits))


def warm(preload: str) -> None:
    """Load what every job needs once, then keep it where forks share it.

    `preload` is "all" (a warm pool), "none" (the probe) or one harness slug
    (a cold sandbox loads just what its one job needs, so the job's clock
    measures the job, not the model build).
    """
    gc_policy.while_starting()  # torch and the models: few collections
    if preload != "none":
        from grading_engine.harness.child import preload as load

        load(None if preload == "all" else [preload])
    if preload == "all":
        # A warm pool forks a job per grade for hours: huge pages make each
        # fork cheaper. A cold sandbox forks one slot and one job, and
        # copying its models into huge pages cost more than those two forks.
        collapse_to_huge_pages()
    # Objects that exist now are never collected, so a slot's garbage
    # collector does not write to (and copy) the zygote's pages; slots and
    # their jobs collect at Python's usual pace.
    gc_policy.started()
    ns.prctl(ns.PR_SET_DUMPABLE, 0)


def spawn_slot(zygote_sock, slot_fd: int, spec: dict, limits: Limits) -> dict:
    """Fork a slot worker serving on `slot_fd`; the zygote keeps nothing of it."""
    uid, scratch = spec.get("uid"), spec.get("scratch")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(slot_fd)
        return {"spawned": False, "error": f"fork: {exc}"}
    if pid == 0:
        code = 0
        try:
            zygote_sock.close()
            enter_slot(uid=uid, scratch=scratch, limits=limits, then_wait=False)
            serve_slot(socket.socket(fileno=slot_fd), limits, SANDBOX_TMP)
        except BaseException:  # noqa: BLE001 - tell the parent on the slot socket
            code = 70
            _report_failure(slot_fd)
        finally:
            os._exit(code)
    os.close(slot_fd)
    _, status = os.waitpid(pid, 0)  # the first fork exits once the slot runs
    if os.waitstatus_to_exitcode(status) != 0:
        return {"spawned": False, "error": "the slot could not be set up"}
    return {"spawned": True}


def enter_slot(
    *, uid: int | None, scratch: str | None, limits: Limits, then_wait: bool
) -> None:
    """Become a slot: own namespaces, /tmp and /proc, the slot uid, no caps.

    Called in a fresh fork of the zygote. The new pid namespace applies to
    children, so this forks once more and only the second child (pid 1 of
    the new namespace) returns; the first exits at once (the zygote reaps
    it and keeps no child), or with `then_wait`, when the slot does, with
    its status (the probe). `uid` None is degraded mode: no sandbox at all,
    `scratch` as /tmp.
    """
    if uid is not None:
        ns.unshare(ns.SLOT_NAMESPACES)
    child = os.fork()
    if child:
        code = 0
        if then_wait:
            code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        os._exit(code & 0xFF)
    if uid is None:
        os.setsid()
        os.chdir(scratch)
        os.environ["TMPDIR"] = os.environ["HOME"] = scratch
        ns.prctl(ns.PR_SET_DUMPABLE, 0)
        return
    os.setsid()
    ns.mount(None, "/", None, ns.MS_REC | ns.MS_PRIVATE)
    ns.mount(
        "tmpfs",
        SANDBOX_TMP,
        "tmpfs",
        ns.MS_NOSUID | ns.MS_NODEV,
        f"size={limits.tmp_bytes},mode=0755,uid={uid},gid={uid}",
    )
    # Over the zygote's /proc: this one shows the slot's pid namespace only.
    ns.mount("proc", "/proc", "proc", ns.MS_NOSUID | ns.MS_NODEV | ns.MS_NOEXEC)
    set_slot_rlimits(limits)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # from the namespace's root: clears every cap
    ns.prctl(ns.PR_SET_NO_NEW_PRIVS, 1)
    ns.prctl(ns.PR_SET_DUMPABLE, 0)
    if ns.effective_capabilities():
        raise RuntimeError("a slot kept capabilities after dropping to its uid")
    os.chdir(SANDBOX_TMP)


def _report_failure(slot_fd: int) -> None:
    try:
        with socket.socket(fileno=os.dup(slot_fd)) as sock:
            send(sock, {"ready": False, "error": traceback.format_exc()[-2000:]})
    except BaseException:  # noqa: BLE001, S110 - the parent sees the socket close
        pass


def probe_slot(uid: int | None, limits: Limits, report) -> int:
    """Set up one slot exactly as the pool does and run `report()` in it."""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            enter_slot(uid=uid, scratch="/tmp", limits=limits, then_wait=True)  # noqa: S108
            report()
        except BaseException:  # noqa: BLE001
            code = 70
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
