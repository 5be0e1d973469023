"""Enter a new user namespace, wait for its uid map, become its root, exec.

Run by the grading process (root) as `python -I -S userns_exec.py R W ARGV...`
to start the zygote's bwrap. After `unshare(CLONE_NEWUSER)` it writes one
byte on W and waits for one on R while the parent writes the uid and gid
maps, which only a process outside (with CAP_SETUID there) can do for more
than one uid: inside root -> the zygote's own unprivileged uid, and each slot
uid -> itself. It then becomes root of that namespace (capabilities there
only, none outside) and execs ARGV (bwrap), which sees uid 0 and so may build
namespaces and keep the capabilities the zygote needs to set up slots.

Standalone on purpose (stdlib only, started with -S): it runs outside any
sandbox, before the engine is importable by the target uid.
"""

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main(argv: list[str]) -> None:
    ready_read, ready_write, command = int(argv[0]), int(argv[1]), argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWUSER) != 0:
        sys.exit(f"userns_exec: unshare: {os.strerror(ctypes.get_errno())}")
    os.write(ready_write, b"u")
    os.close(ready_write)
    if os.read(ready_read, 1) != b"m":
        sys.exit("userns_exec: the parent did not write the uid map")
    os.close(ready_read)
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)
    os.execv(command[0], command)  # noqa: S606 - bwrap, argv from the parent


if __name__ == "__main__":
    main(sys.argv[1:])
