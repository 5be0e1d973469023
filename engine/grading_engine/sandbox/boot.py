"""Entry point inside the sandbox: `python -m grading_engine.sandbox.boot MODE ...`.

Modes:
  cold RESULT READY LIMITS CPU   run one job from stdin, result to RESULT
                                 (moved to fd 3); READY is closed when the
                                 job's clock should start
  warm FD LIMITS                 serve jobs on the control socket FD
  probe            print which protections this process sees, as JSON

Every mode locks the process down (rlimits, seccomp) before any learner
code can run. LIMITS is the JSON of a `Limits`.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sys

from grading_engine.sandbox import seccomp
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.lockdown import RESULT_FD, close_other_fds, lock_down


def cold(result_fd: int, ready_fd: int, limits: Limits, cpu_seconds: int) -> None:
    """Import torch, lock down, tell the parent (closing `ready_fd`), run."""
    if ready_fd == RESULT_FD:
        ready_fd = os.dup(ready_fd)  # or the dup2 below would close it
    if result_fd != RESULT_FD:
        os.dup2(result_fd, RESULT_FD)
        os.close(result_fd)
    # Import torch before the lock-down: the filter allows what torch needs,
    # and the address-space cap is measured from a settled process.
    import grading_engine.harness.child  # noqa: F401

    lock_down(limits, cpu_seconds)
    os.close(ready_fd)  # the job's wall clock starts now, not at bwrap
    close_other_fds(RESULT_FD)
    from grading_engine.harness.__main__ import main

    main()


NAMESPACES = ("user", "pid", "net", "ipc", "uts", "mnt")


def namespace_ids() -> dict[str, int]:
    """Inode of each namespace this process is in (equal inode = same ns)."""
    return {name: os.stat(f"/proc/self/ns/{name}").st_ino for name in NAMESPACES}


def probe() -> None:
    """Report what the sandbox looks like from inside, after lock-down."""
    facts: dict = {"uid": os.getuid(), "pid": os.getpid(), "ns": namespace_ids()}
    with open("/proc/net/dev") as f:
        facts["interfaces"] = [line.split(":")[0].strip() for line in f][2:]
    try:
        lock_down(Limits(), cpu_seconds=5)
        facts["seccomp"] = seccomp.mode() == 2
        facts["rlimits"] = {
            name: resource.getrlimit(getattr(resource, f"RLIMIT_{name}"))[1]
            for name in ("CPU", "NPROC", "FSIZE", "NOFILE", "CORE", "AS")
        }
    except OSError as exc:
        facts["seccomp"] = False
        facts["seccomp_error"] = str(exc)
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        facts["inet_socket"] = True
    except OSError:
        facts["inet_socket"] = False
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        facts["fork"] = True
    except OSError:
        facts["fork"] = False
    facts["root_writable"] = _writable("/probe-write")
    facts["dev_writable"] = _writable("/dev/probe-write")
    facts["environ"] = sorted(os.environ)
    print(json.dumps(facts))


def _writable(path: str) -> bool:
    try:
        with open(path, "w"):
            pass
        return True
    except OSError:
        return False


def main(argv: list[str]) -> None:
    mode = argv[0] if argv else ""
    if mode == "probe":
        probe()
    elif mode == "cold" and len(argv) == 5:
        result_fd, ready_fd = int(argv[1]), int(argv[2])
        cold(result_fd, ready_fd, Limits(**json.loads(argv[3])), int(argv[4]))
    elif mode == "warm" and len(argv) == 3:
        from grading_engine.sandbox.worker import serve

        serve(int(argv[1]), Limits(**json.loads(argv[2])))
    else:
        sys.exit("usage: boot cold RESULT_FD READY_FD LIMITS CPU | warm FD LIMITS")


if __name__ == "__main__":
    main(sys.argv[1:])
