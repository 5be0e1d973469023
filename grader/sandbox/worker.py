"""The warm worker: preloaded once, then one fresh fork per job.

Runs inside a slot's sandbox. It imports torch and warms the reference
models (`preload`), makes itself non-dumpable (so a same-uid child cannot
read its memory through /proc) and waits on its control socket. For each
job the parent sends the job (a memfd) and three pipe write ends (result,
stdout, stderr) with SCM_RIGHTS. The worker forks; the child takes a new
session, keeps only those pipes, lowers its rlimits, installs seccomp and
runs the job, so nothing a learner changes outlives their own grade.

Protocol (SOCK_SEQPACKET, one JSON object per message):
  worker -> parent  {"ready": true} | {"ready": false, "error": str}
  parent -> worker  {"cpu_seconds": int}  + fds [job, result, stdout, stderr]
  parent -> worker  {"kill": true}        (wall-clock limit reached)
  worker -> parent  {"exit_code": int}    (negative: killed by that signal)
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import select
import shutil
import signal
import socket
import sys
import traceback

from grader.sandbox.boot import RESULT_FD, close_other_fds, lock_down
from grader.sandbox.limits import Limits

MAX_MESSAGE = 4096
FDS_PER_JOB = 4
_PR_SET_DUMPABLE = 4


def send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    ancillary = []
    if fds:
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
    sock.sendmsg([json.dumps(message).encode()], ancillary)


def receive(sock: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message and any descriptors; (None, []) when the peer is gone."""
    space = socket.CMSG_SPACE(max_fds * 4) if max_fds else 0
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, space)
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds.extend(array.array("i", payload[:usable]))
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data), fds


def serve(control_fd: int, limits: Limits) -> None:
    """Preload, then run jobs until the parent closes the socket."""
    _keep_only(control_fd)
    sock = socket.socket(fileno=control_fd)
    try:
        from grader.harness.child import preload

        preload()
    except BaseException:  # noqa: BLE001 - the parent must hear why
        send(sock, {"ready": False, "error": traceback.format_exc()[-2000:]})
        return
    collapse_to_huge_pages()
    ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    send(sock, {"ready": True})
    while True:
        request, fds = receive(sock, FDS_PER_JOB)
        if request is None:
            return
        if request.get("kill"):
            continue  # a kill that crossed the job's exit: nothing to kill
        if len(fds) != FDS_PER_JOB or "cpu_seconds" not in request:
            for fd in fds:
                os.close(fd)
            send(sock, {"exit_code": None, "error": "malformed request"})
            continue
        send(sock, {"exit_code": _run_one(sock, fds, limits, request)})


_MADV_COLLAPSE = 25
_HUGE = 2 * 1024 * 1024


def collapse_to_huge_pages(min_bytes: int = 4 * _HUGE) -> int:
    """Back the big anonymous mappings (model weights) with 2 MB pages.

    fork copies one page-table entry per 4 kB page: for a worker holding
    ~1.2 GB of weights that is ~300k entries and ~100 ms per job, again at
    exit. With huge pages it is ~600 entries and ~20 ms. MADV_COLLAPSE
    (Linux 6.1) works even when THP is in "madvise" mode; elsewhere this
    does nothing. Returns the bytes collapsed.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    collapsed = 0
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        anonymous = len(fields) < 6 and fields[1].startswith("rw")
        low, high = (int(x, 16) for x in fields[0].split("-"))
        start, end = -(-low // _HUGE) * _HUGE, high // _HUGE * _HUGE
        if anonymous and end - start >= min_bytes:
            if libc.madvise(start, end - start, _MADV_COLLAPSE) == 0:
                collapsed += end - start
    return collapsed


def _keep_only(fd: int) -> None:
    for other in range(3, os.sysconf("SC_OPEN_MAX")):
        if other != fd:
            try:
                os.close(other)
            except OSError:
                pass


def _run_one(sock: socket.socket, fds: list[int], limits: Limits, request) -> int:
    job_fd, result_fd, out_fd, err_fd = fds
    with os.fdopen(job_fd, "rb") as f:
        job = json.loads(f.read().decode("utf-8"))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(job, result_fd, out_fd, err_fd, limits, int(request["cpu_seconds"]))
    for fd in (result_fd, out_fd, err_fd):
        os.close(fd)  # the child holds the only write ends: EOF = it exited
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([sock, pidfd], [], [])
            if pidfd in ready:
                break
            message, extra = receive(sock)
            for fd in extra:
                os.close(fd)
            if message is None or message.get("kill"):
                os.kill(pid, signal.SIGKILL)
                if message is None:
                    os.waitpid(pid, 0)
                    sys.exit(0)  # the parent is gone: so are we
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    scrub_scratch()
    return os.waitstatus_to_exitcode(status)


SCRATCH = ("/tmp", "/dev/shm")  # noqa: S108 - the slot's private tmpfs


def scrub_scratch() -> None:
    """Empty the slot's writable dirs so a job leaves nothing for the next.

    The tmpfs lives as long as the slot; the job's files must not. rmtree
    never follows symlinks, and the learner's chmods are undone first (same
    uid, so the worker owns everything it finds).
    """
    for top in SCRATCH:
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for name in names:
            path = os.path.join(top, name)
            if os.path.isdir(path) and not os.path.islink(path):
                _make_removable(path)
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def _make_removable(root: str) -> None:
    os.chmod(root, 0o700)
    for directory, dirs, _ in os.walk(root):
        for name in dirs:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)


def _prefer_for_oom_kill() -> None:
    """Under memory pressure the job dies, not the warm worker.

    /proc/self/oom_score_adj belongs to root while the process is
    non-dumpable (inherited from the worker), hence the short flip.
    """
    prctl = ctypes.CDLL(None).prctl
    prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    finally:
        prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _child(job, result_fd, out_fd, err_fd, limits: Limits, cpu_seconds: int):
    """In the fork: isolate, lock down, run the job, never return."""
    code = 0
    try:
        os.setsid()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.dup2(result_fd, RESULT_FD)
        close_other_fds(RESULT_FD)  # the control socket among them
        _prefer_for_oom_kill()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        lock_down(limits, cpu_seconds)
        from grader.harness.child import execute_job

        execute_job(job, RESULT_FD)
    except BaseException:  # noqa: BLE001 - report on stderr, then exit
        code = 70
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001, S110
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
