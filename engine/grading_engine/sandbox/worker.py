"""A slot's warm worker: forked from the zygote, then one fresh fork per job.

The zygote (`grading_engine.sandbox.zygote`) has imported torch and built the
reference models; a slot worker is its copy-on-write child, already in its
own namespaces and uid. For each job the parent sends the job (a memfd) and
four pipe ends (result, stdout, stderr write ends; a "go" read end) with
SCM_RIGHTS. The worker forks without reading the job: only the child ever
holds a job's code or data, and it dies with its grade, so a later fork
cannot find an earlier job in memory it inherited. The child takes a new
session, tells the parent it exists (whose kernel then reports its host
pid), waits on "go" while the parent sets its oom_score_adj from outside,
reads its job, keeps only its pipes, lowers its rlimits, installs seccomp
and runs the job.

After each job the worker empties the slot's /tmp in a forked scrubber
(so not even the learner's file names enter the worker's memory).

Protocol (SOCK_SEQPACKET, one JSON object per message):
  worker -> parent  {"ready": true} | {"ready": false, "error": str}
  parent -> worker  {"cpu_seconds": int}  + fds [job, result, stdout, stderr, go]
  child  -> parent  {"started": true}     (SCM_CREDENTIALS: its host pid)
  parent -> child   one byte on "go"       (its oom_score_adj is set)
  parent -> worker  {"kill": true}        (wall-clock limit reached, cancelled)
  worker -> parent  {"exit_code": int, "cpu_ms": float}
                                         (negative: killed by that signal;
                                          the CPU time the job used)
  worker -> parent  {"clean": bool}       (/tmp emptied; false: worker exits)
"""

from __future__ import annotations

import array
import ctypes
import json
import os
import select
import signal
import socket
import stat
import struct
import sys
import traceback

from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.lockdown import RESULT_FD, close_other_fds, lock_down

MAX_MESSAGE = 4096
FDS_PER_JOB = 5
_UCRED = struct.Struct("iII")  # struct ucred: pid, uid, gid


def send(sock: socket.socket, message: dict, fds: list[int] = ()) -> None:
    ancillary = []
    if fds:
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
    sock.sendmsg([json.dumps(message).encode()], ancillary)


def receive(sock: socket.socket, max_fds: int = 0) -> tuple[dict | None, list[int]]:
    """One message and any descriptors; (None, []) when the peer is gone."""
    message, fds, _ = receive_with_sender(sock, max_fds)
    return message, fds


def receive_with_sender(
    sock: socket.socket, max_fds: int = 0
) -> tuple[dict | None, list[int], int | None]:
    """Like `receive`, plus the sender's pid as the receiver's kernel sees it.

    The pid is there only when the receiving end set SO_PASSCRED: the kernel
    then attaches the sending process's credentials to every message and
    translates the pid into the receiver's pid namespace (the host's, for
    the pool's parent), which no process inside the sandbox can forge.
    """
    space = socket.CMSG_SPACE(_UCRED.size)
    if max_fds:
        space += socket.CMSG_SPACE(max_fds * 4)
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, space)
    fds: list[int] = []
    sender = None
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds.extend(array.array("i", payload[:usable]))
        elif level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            if len(payload) >= _UCRED.size:
                sender = _UCRED.unpack_from(payload)[0] or None
    if not data:
        for fd in fds:
            os.close(fd)
        return None, [], sender
    return json.loads(data), fds, sender


def serve_slot(sock: socket.socket, limits: Limits, tmp: str) -> None:
    """Run jobs until the parent closes the socket."""
    keep_only(sock.fileno())
    # /tmp inside the sandbox; a private host directory in degraded mode.
    scratch = Scratch(os.environ.get("TMPDIR") or tmp)
    if not scratch.reset():
        send(sock, {"ready": False, "error": "cannot empty the scratch dir"})
        return
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
            send(sock, {"clean": True})
            continue
        exit_code, cpu_ms = _run_one(sock, fds, limits, request)
        send(sock, {"exit_code": exit_code, "cpu_ms": cpu_ms})
        clean = scratch.reset()
        send(sock, {"clean": clean})
        if not clean:
            return  # a /tmp we cannot empty must not meet the next job


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


def keep_only(fd: int) -> None:
    for other in range(3, os.sysconf("SC_OPEN_MAX")):
        if other != fd:
            try:
                os.close(other)
            except OSError:
                pass


def _run_one(
    sock: socket.socket, fds: list[int], limits: Limits, request
) -> tuple[int, float]:
    """Fork the job's child and wait for it; never reads the job itself.

    Returns its exit code and the CPU time it (and any child it waited for)
    used, in milliseconds, from the kernel's accounting at its exit.
    """
    cpu_seconds = int(request["cpu_seconds"])
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _child(sock, fds, limits, cpu_seconds)
    for fd in fds:
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
    _, status, usage = os.wait4(pid, 0)
    cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000
    return os.waitstatus_to_exitcode(status), round(cpu_ms, 3)


class Scratch:
    """The slot's /tmp, put back as it was after every job.

    The tmpfs lives as long as the slot; what a job leaves in it (files,
    its xattrs, its mode or times) must not reach the next job. The worker
    only stats it: when anything changed, a forked scrubber empties it, so
    not even the learner's file names enter the long-lived worker's memory.
    An empty directory whose ctime, size and link count did not change is
    still empty, so the stat is enough once /tmp has been emptied: the
    first `reset` always scrubs (preload leaves torch's cache dir there).
    """

    def __init__(self, path: str):
        self.path = path
        self.mode = stat.S_IMODE(os.stat(path).st_mode)
        self.seen: tuple | None = None

    def _state(self) -> tuple | None:
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_ctime_ns, st.st_mtime_ns, st.st_mode, st.st_nlink, st.st_size)

    def reset(self) -> bool:
        """True when /tmp is as the last job found it (empty, same mode)."""
        if self.seen is not None and self._state() == self.seen:
            return True  # untouched: nothing to do, no fork
        clean = run_forked(lambda: scrub(self.path, self.mode))
        self.seen = self._state() if clean else None
        return clean


def run_forked(task) -> bool:
    """Run `task()` in a fork; True when it returned True. Never raises."""
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:
        code = 1
        try:
            code = 0 if task() else 1
        except BaseException:  # noqa: BLE001, S110 - the exit status says it
            pass
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        return False
    return os.waitstatus_to_exitcode(status) == 0


_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def scrub(top: str, mode: int = 0o755) -> bool:
    """Empty `top` and give it back `mode`, no xattrs and fresh times.

    Iterative, with one directory open at a time, so no depth of tree (nor
    a path longer than PATH_MAX) can make it recurse or run out of
    descriptors; never follows a symlink (entries are unlinked, directories
    opened with O_NOFOLLOW); undoes the learner's chmods (same uid, so the
    worker owns all it finds). Returns False, never raises, when something
    could not be removed.
    """
    try:
        fd = os.open(top, _DIR)
    except OSError:
        return False
    path: list[str] = []  # names from `top` down to `fd`
    try:
        while True:
            os.fchmod(fd, 0o700)
            below = _unlink_all_but_directories(fd)
            if below is not None:
                try:
                    os.chmod(below, 0o700, dir_fd=fd)  # a directory, by lstat
                    inner = os.open(below, _DIR, dir_fd=fd)
                except OSError:
                    os.rmdir(below, dir_fd=fd)  # an empty one may still go
                    continue
                os.close(fd)
                fd = inner
                path.append(below)
                continue
            if not path:
                break
            outer = os.open("..", _DIR, dir_fd=fd)
            os.close(fd)
            fd = outer
            os.rmdir(path.pop(), dir_fd=fd)
        for name in os.listxattr(fd):
            os.removexattr(fd, name)
        os.fchmod(fd, mode)
        os.utime(fd)
        return True
    except BaseException:  # noqa: BLE001 - the caller must never see one
        return False
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def _unlink_all_but_directories(fd: int) -> str | None:
    """Unlink every non-directory in `fd`; return one subdirectory's name."""
    below = None
    with os.scandir(fd) as entries:
        names = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
    for name, is_dir in names:
        if is_dir:
            below = name
        else:
            os.unlink(name, dir_fd=fd)
    return below


def _await_go(go_fd: int) -> None:
    """Block until the parent says the job may start (it set our OOM score)."""
    if os.read(go_fd, 1) != b"g":
        raise RuntimeError("the parent did not let the job start")


def _read_job(job_fd: int) -> dict:
    with os.fdopen(job_fd, "rb", closefd=False) as f:
        return json.loads(f.read().decode("utf-8"))


def _child(sock, fds: list[int], limits: Limits, cpu_seconds: int):
    """In the fork: isolate, lock down, run the job, never return."""
    job_fd, result_fd, out_fd, err_fd, go_fd = fds
    code = 0
    try:
        os.setsid()
        # The parent learns our host pid from this message's credentials,
        # sets our oom_score_adj to 1000 from outside and only then says go.
        # We cannot lower it: non-dumpable (as the worker), our /proc files
        # are root's, and seccomp refuses PR_SET_DUMPABLE.
        send(sock, {"started": True})
        _await_go(go_fd)
        job = _read_job(job_fd)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        os.dup2(result_fd, RESULT_FD)
        close_other_fds(RESULT_FD)  # the control socket and the job among them
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        lock_down(limits, cpu_seconds)
        from grading_engine.harness.child import execute_job
        from grading_engine.reference.cache import process_ends_with_its_job

        # This fork exits after the job: what it does to a cached model
        # dies with it, so exercises may change that model in place.
        process_ends_with_its_job()
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
