"""The hand-assembled seccomp filter, checked in a forked test process."""

from __future__ import annotations

import os
import socket

import pytest
from grading_engine.sandbox import seccomp

pytestmark = pytest.mark.sandbox


def run_filtered(probe) -> str:
    """Fork, install the filter, run `probe()` and return what it reported."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        try:
            seccomp.install()
            report = probe()
        except BaseException as exc:  # noqa: BLE001
            report = f"crashed: {exc!r}"
        os.write(write, report.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        report = f.read().decode()
    os.waitpid(pid, 0)
    return report


def outcome(call) -> str:
    try:
        call()
        return "ok"
    except OSError as exc:
        return f"errno {exc.errno}"


def test_the_filter_is_active_after_install():
    assert run_filtered(lambda: str(seccomp.mode())) == "2"


def test_it_lets_a_process_signal_only_itself():
    parent = os.getpid()
    report = run_filtered(
        lambda: " ".join(
            [
                outcome(lambda: os.kill(os.getpid(), 0)),
                outcome(lambda: os.kill(parent, 0)),
                outcome(lambda: os.kill(-1, 0)),
            ]
        )
    )
    assert report == "ok errno 1 errno 1"


def test_it_allows_unix_sockets_and_threads_but_not_inet_or_fork():
    import threading

    def probe():
        thread = threading.Thread(target=lambda: None)
        thread.start()
        thread.join()
        return " ".join(
            [
                outcome(lambda: socket.socketpair(socket.AF_UNIX)),
                outcome(lambda: socket.socket(socket.AF_INET)),
                outcome(lambda: socket.socket(socket.AF_INET6)),
                outcome(os.fork),
            ]
        )

    assert run_filtered(probe) == "ok errno 1 errno 1 errno 1"


def test_every_denied_syscall_has_a_number_on_each_architecture():
    for machine in ("x86_64", "aarch64"):
        program = seccomp.build_filter(1234, machine)
        assert len(program) % 8 == 0
        assert len(program) // 8 < 4096  # the kernel's BPF_MAXINSNS


def test_it_lets_a_process_change_limits_and_priority_of_itself_only():
    import resource

    parent = os.getpid()

    def probe():
        nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
        return " ".join(
            [
                outcome(lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, nofile)),
                outcome(lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0))),
                outcome(lambda: os.setpriority(os.PRIO_PROCESS, 0, 1)),
                outcome(lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE)),
                outcome(lambda: os.setpriority(os.PRIO_PROCESS, parent, 19)),
                outcome(lambda: os.setpriority(os.PRIO_USER, 0, 19)),
                outcome(lambda: os.sched_setaffinity(parent, {0})),
            ]
        )

    assert run_filtered(probe) == "ok ok ok errno 1 errno 1 errno 1 errno 1"


def test_it_refuses_to_make_a_descriptor_signal_another_process():
    import fcntl
    import struct

    parent = os.getpid()

    def probe():
        r, w = os.pipe()
        a, _ = socket.socketpair()
        me = struct.pack("i", os.getpid())
        return " ".join(
            [
                outcome(lambda: fcntl.fcntl(r, fcntl.F_SETOWN, parent)),
                outcome(lambda: fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())),
                outcome(lambda: fcntl.fcntl(r, 15, struct.pack("ii", 1, parent))),
                outcome(lambda: fcntl.fcntl(r, 10, 19)),  # F_SETSIG SIGSTOP
                outcome(lambda: fcntl.ioctl(a.fileno(), 0x8901, me)),  # FIOSETOWN
                outcome(lambda: fcntl.ioctl(a.fileno(), 0x8902, me)),  # SIOCSPGRP
                # what programs do need still works
                outcome(lambda: fcntl.fcntl(r, fcntl.F_GETOWN)),
                outcome(lambda: fcntl.fcntl(w, fcntl.F_SETFL, os.O_NONBLOCK)),
                outcome(lambda: fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10)),
                outcome(lambda: fcntl.ioctl(r, 0x541B, b"\0" * 4)),  # FIONREAD
            ]
        )

    assert run_filtered(probe) == " ".join(["errno 1"] * 6 + ["ok"] * 4)


def test_it_refuses_to_create_ipc_objects_that_outlive_a_job():
    import ctypes
    import platform

    numbers = {"x86_64": (29, 64, 68), "aarch64": (194, 190, 186)}
    if platform.machine() not in numbers:
        pytest.skip(f"no syscall numbers for {platform.machine()}")

    def probe():
        libc = ctypes.CDLL(None, use_errno=True)
        found = []
        for nr, args in zip(
            numbers[platform.machine()],
            ((0, 4096, 0o1600), (0, 1, 0o1600), (0, 0o1600)),  # IPC_PRIVATE|CREAT
            strict=True,
        ):
            result = libc.syscall(nr, *args)
            found.append(f"{result}/{ctypes.get_errno()}")
        return " ".join(found)

    assert run_filtered(probe) == "-1/1 -1/1 -1/1"


def test_a_process_cannot_make_itself_dumpable_again():
    import ctypes

    def probe():
        libc = ctypes.CDLL(None, use_errno=True)
        found = [str(libc.prctl(3, 0, 0, 0, 0))]  # PR_GET_DUMPABLE: allowed
        for value in (1, 0):  # PR_SET_DUMPABLE: refused, whatever the value
            result = libc.prctl(4, value, 0, 0, 0)
            found.append(f"{result}/{ctypes.get_errno()}")
        found.append(str(libc.prctl(15, b"renamed", 0, 0, 0)))  # PR_SET_NAME
        return " ".join(found)

    assert run_filtered(probe) == "1 -1/1 -1/1 0"
