"""Entry point inside the sandbox: `python -c BOOT MODE ...` (see `argv`).

Modes:
  zygote FD LIMITS PRELOAD   warm up (PRELOAD: all, none or one harness slug),
                             then spawn slots on the control socket FD
  probe UID LIMITS           set up one slot as the pool does (UID: the slot
                             uid, or "none" when degraded), lock it down as a
                             job, and print what it sees, as JSON

Learner code only ever runs in a job forked from a slot, after the slot
dropped to its uid and the job locked itself down (rlimits, seccomp).
LIMITS is the JSON of a `Limits`.

The sandbox imports this module and calls `main` (`argv` builds that command
line) rather than running it with `python -m`: runpy would execute a second
copy of it as `__main__`, and any import of `grading_engine.sandbox.boot`
on the way (a package `__init__`, a module the zygote loads) would make it
print a RuntimeWarning to stderr, which every learner's verdict would show.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import sys

from grading_engine.sandbox import seccomp
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.lockdown import lock_down
from grading_engine.sandbox.namespaces import namespace_ids

# What the interpreter runs: an import and a call, never runpy.
_BOOT = "import sys; from grading_engine.sandbox.boot import main; main(sys.argv[1:])"


def argv(*args: str) -> list[str]:
    """The interpreter arguments that run `main(args)` in the sandbox."""
    return ["-c", _BOOT, *args]


def probe() -> None:
    """Report what the sandbox looks like from inside, after lock-down."""
    facts: dict = {"uid": os.getuid(), "pid": os.getpid(), "ns": namespace_ids()}
    with open("/proc/net/dev") as f:
        facts["interfaces"] = [line.split(":")[0].strip() for line in f][2:]
    facts["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
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
    if mode == "zygote" and len(argv) == 4:
        from grading_engine.sandbox.zygote import serve

        serve(int(argv[1]), Limits(**json.loads(argv[2])), argv[3])
    elif mode == "probe" and len(argv) == 3:
        from grading_engine.sandbox.zygote import probe_slot

        uid = None if argv[1] == "none" else int(argv[1])
        sys.exit(probe_slot(uid, Limits(**json.loads(argv[2])), probe))
    else:
        sys.exit("usage: boot zygote FD LIMITS PRELOAD | probe UID|none LIMITS")


if __name__ == "__main__":
    main(sys.argv[1:])
