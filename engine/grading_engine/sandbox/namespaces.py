"""The few Linux calls the zygote needs that `os` lacks: unshare, mount, prctl.

Plain ctypes over libc, so the sandbox needs no compiled helper. Each call
raises OSError with the kernel's reason, never fails silently.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
# Everything a slot gets of its own; the user namespace stays the zygote's,
# whose uid map is what lets the slot become its own outside uid.
SLOT_NAMESPACES = (
    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
)

MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REC = 16384
MS_PRIVATE = 1 << 18

PR_SET_DUMPABLE = 4

NAMESPACES = ("user", "pid", "net", "ipc", "uts", "mnt")


def namespace_ids() -> dict[str, int]:
    """Inode of each namespace this process is in (equal inode = same ns)."""
    return {name: os.stat(f"/proc/self/ns/{name}").st_ino for name in NAMESPACES}


PR_SET_NO_NEW_PRIVS = 38

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_void_p,
]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data=None):
    def raw(value):
        return None if value is None else value.encode()

    data_arg = None if data is None else ctypes.c_char_p(data.encode())
    _check(
        _libc.mount(raw(source), raw(target), raw(fstype), flags, data_arg),
        f"mount {target}",
    )


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, value, 0, 0, 0), f"prctl {option}")


def effective_capabilities() -> int:
    """This process's effective capability set, as a bit mask."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    raise OSError("no CapEff in /proc/self/status")
