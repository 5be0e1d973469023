"""A seccomp filter for learner code, assembled by hand as classic BPF.

No libseccomp: the program is a short list of 8-byte instructions built
with `struct`, installed with the `seccomp` syscall through ctypes. It is a
deny list on top of namespaces, uids and rlimits: it removes the syscalls
that widen the attack surface (ptrace, bpf, mount, namespaces, io_uring,
keys, perf, userfaultfd) and the ones learner code never needs but an
attack does (exec, new processes, signals to others, directly or through a
descriptor's owner (F_SETOWN/F_SETSIG), becoming dumpable again (so its
/proc files, oom_score_adj among them, stay root's), non-Unix sockets,
System V and POSIX IPC objects that would outlive a job in a warm slot, and
limits, priorities or affinities set on another process of the same uid).
Everything else is allowed so torch keeps working.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

# BPF opcodes (linux/bpf_common.h) and seccomp return values.
_LD_W_ABS = 0x00 | 0x00 | 0x20
_JEQ_K = 0x05 | 0x10 | 0x00
_JGE_K = 0x05 | 0x30 | 0x00
_JSET_K = 0x05 | 0x40 | 0x00
_RET_K = 0x06 | 0x00
_KILL_PROCESS = 0x80000000
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

# Offsets into struct seccomp_data: nr, arch, then 64-bit args (low word first).
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


AF_UNIX = 1
CLONE_THREAD = 0x00010000
# fcntl commands and ioctls that make the kernel signal a chosen process
# (SIGIO, or any signal after F_SETSIG) when a descriptor becomes ready: a
# way round the `kill` rule to the warm worker, which shares the job's uid.
F_SETOWN, F_SETSIG, F_SETOWN_EX = 8, 10, 15
FIOSETOWN, SIOCSPGRP = 0x8901, 0x8902
SIGNAL_OWNER_FCNTL = (F_SETOWN, F_SETSIG, F_SETOWN_EX)
SIGNAL_OWNER_IOCTL = (FIOSETOWN, SIOCSPGRP)
# A job stays non-dumpable (inherited from the warm worker): its /proc files,
# oom_score_adj among them, then belong to root and it cannot write them.
PR_SET_DUMPABLE = 4
_X32_BIT = 0x40000000

# Syscall numbers per architecture; only the ones the filter names.
_TABLES = {
    "x86_64": {
        "audit_arch": 0xC000003E,
        "deny": {
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "kcmp": 312,
            "pidfd_getfd": 438,
            "pidfd_send_signal": 424,
            "bpf": 321,
            "perf_event_open": 298,
            "userfaultfd": 323,
            "mount": 165,
            "umount2": 166,
            "pivot_root": 155,
            "chroot": 161,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "unshare": 272,
            "setns": 308,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "keyctl": 250,
            "add_key": 248,
            "request_key": 249,
            "execve": 59,
            "execveat": 322,
            "fork": 57,
            "vfork": 58,
            "tkill": 200,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "name_to_handle_at": 303,
            "open_by_handle_at": 304,
            "init_module": 175,
            "finit_module": 313,
            "delete_module": 176,
            "kexec_load": 246,
            "kexec_file_load": 320,
            "reboot": 169,
            "swapon": 167,
            "swapoff": 168,
            "acct": 163,
            "syslog": 103,
            "iopl": 172,
            "ioperm": 173,
            "quotactl": 179,
            "uselib": 134,
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            "mq_open": 240,
        },  # fmt: skip
        "socket": 41,
        "socketpair": 53,
        "clone": 56,
        "clone3": 435,
        "kill": 62,
        "tgkill": 234,
        "fcntl": 72,  # x86_64 has no fcntl64
        "ioctl": 16,
        "prctl": 157,
        # Calls that can act on another process of the same uid (the warm
        # worker): allowed on the caller only. name: (nr, pid arg, which).
        "self_only": {
            "prlimit64": (302, 0, None),
            "setpriority": (141, 1, (0, 0)),  # PRIO_PROCESS only
            "ioprio_set": (251, 1, (0, 1)),  # IOPRIO_WHO_PROCESS only
            "sched_setaffinity": (203, 0, None),
            "sched_setscheduler": (144, 0, None),
            "sched_setparam": (142, 0, None),
            "sched_setattr": (314, 0, None),
            "migrate_pages": (256, 0, None),
            "move_pages": (279, 0, None),
        },
    },  # fmt: skip
    "aarch64": {
        "audit_arch": 0xC00000B7,
        "deny": {
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "kcmp": 272,
            "pidfd_getfd": 438,
            "pidfd_send_signal": 424,
            "bpf": 280,
            "perf_event_open": 241,
            "userfaultfd": 282,
            "mount": 40,
            "umount2": 39,
            "pivot_root": 41,
            "chroot": 51,
            "open_tree": 428,
            "move_mount": 429,
            "fsopen": 430,
            "fsconfig": 431,
            "fsmount": 432,
            "fspick": 433,
            "mount_setattr": 442,
            "unshare": 97,
            "setns": 268,
            "io_uring_setup": 425,
            "io_uring_enter": 426,
            "io_uring_register": 427,
            "keyctl": 219,
            "add_key": 217,
            "request_key": 218,
            "execve": 221,
            "execveat": 281,
            "tkill": 130,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "name_to_handle_at": 264,
            "open_by_handle_at": 265,
            "init_module": 105,
            "finit_module": 273,
            "delete_module": 106,
            "kexec_load": 104,
            "kexec_file_load": 294,
            "reboot": 142,
            "swapon": 224,
            "swapoff": 225,
            "acct": 89,
            "syslog": 116,
            "quotactl": 60,
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
            "mq_open": 180,
        },  # fmt: skip
        "socket": 198,
        "socketpair": 199,
        "clone": 220,
        "clone3": 435,
        "kill": 129,
        "tgkill": 131,
        "fcntl": 25,  # aarch64 has no fcntl64
        "ioctl": 29,
        "prctl": 167,
        "self_only": {
            "prlimit64": (261, 0, None),
            "setpriority": (140, 1, (0, 0)),
            "ioprio_set": (30, 1, (0, 1)),
            "sched_setaffinity": (122, 0, None),
            "sched_setscheduler": (119, 0, None),
            "sched_setparam": (118, 0, None),
            "sched_setattr": (274, 0, None),
            "migrate_pages": (238, 0, None),
            "move_pages": (239, 0, None),
        },
    },  # fmt: skip
}
_SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}

DENIED = tuple(sorted(_TABLES["x86_64"]["deny"]))


class SeccompError(OSError):
    """The kernel refused the filter (or has no seccomp)."""


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _ret(value: int) -> bytes:
    return _ins(_RET_K, value)


def _deny(err: int) -> bytes:
    return _ret(_ERRNO | (err & 0xFFFF))


def build_filter(own_pid: int, machine: str | None = None) -> bytes:
    """Assemble the filter for a process whose pid (as it sees it) is `own_pid`.

    `kill` and `tgkill` are allowed only towards the process itself (or its
    own process group, which in the sandbox holds only it), so learner code
    can raise signals at itself but never reach the warm worker or a
    neighbour.
    """
    table = _TABLES[machine or platform.machine()]
    prog = [
        _ins(_LD_W_ABS, _ARCH),
        _ins(_JEQ_K, table["audit_arch"], 1, 0),
        _ret(_KILL_PROCESS),  # a foreign ABI could bypass every number below
        _ins(_LD_W_ABS, _NR),
    ]
    if table is _TABLES["x86_64"]:
        prog += [_ins(_JGE_K, _X32_BIT, 0, 1), _deny(errno.EPERM)]
    for nr in sorted(table["deny"].values()):
        prog += [_ins(_JEQ_K, nr, 0, 1), _deny(errno.EPERM)]
    # clone3 hides its flags behind a pointer; ENOSYS makes glibc fall back
    # to clone, whose flags we can read.
    prog += [_ins(_JEQ_K, table["clone3"], 0, 1), _deny(errno.ENOSYS)]

    def when_arg(nr: int, index: int, test: bytes, err: int) -> list[bytes]:
        # if nr matches: load arg, allow when `test` jumps true, else deny.
        return [
            _ins(_JEQ_K, nr, 0, 4),
            _ins(_LD_W_ABS, _arg_low(index)),
            test,
            _deny(err),
            _ret(_ALLOW),
        ]

    allow_next = 1  # `test` jumps over the deny straight to ALLOW
    prog += when_arg(
        table["clone"], 0, _ins(_JSET_K, CLONE_THREAD, allow_next, 0), errno.EPERM
    )
    for name in ("socket", "socketpair"):
        prog += when_arg(
            table[name], 0, _ins(_JEQ_K, AF_UNIX, allow_next, 0), errno.EPERM
        )

    def self_only(nr: int, pid_arg: int, which=None) -> list[bytes]:
        # Allow when the pid argument is 0 (the caller) or the caller's pid,
        # and, with `which` = (arg, value), only for that kind of target.
        body = []
        if which is not None:
            body += [_ins(_LD_W_ABS, _arg_low(which[0])), _ins(_JEQ_K, which[1], 0, 3)]
        body += [
            _ins(_LD_W_ABS, _arg_low(pid_arg)),
            _ins(_JEQ_K, own_pid, 2, 0),
            _ins(_JEQ_K, 0, 1, 0),
            _deny(errno.EPERM),
            _ret(_ALLOW),
        ]
        return [_ins(_JEQ_K, nr, 0, len(body)), *body]

    # kill(0) is the caller's own process group, which holds only itself.
    prog += self_only(table["kill"], 0)
    for nr, pid_arg, which in table["self_only"].values():
        prog += self_only(nr, pid_arg, which)
    prog += when_arg(
        table["tgkill"], 0, _ins(_JEQ_K, own_pid, allow_next, 0), errno.EPERM
    )

    def deny_values(nr: int, index: int, values: tuple[int, ...]) -> list[bytes]:
        # if nr matches: EPERM when the argument is one of `values`, else allow.
        body = [_ins(_LD_W_ABS, _arg_low(index))]
        for i, value in enumerate(values):
            body.append(_ins(_JEQ_K, value, len(values) - i, 0))  # to the deny
        body += [_ret(_ALLOW), _deny(errno.EPERM)]
        return [_ins(_JEQ_K, nr, 0, len(body)), *body]

    # The command is an unsigned int: the low word is all the kernel reads.
    prog += deny_values(table["fcntl"], 1, SIGNAL_OWNER_FCNTL)
    prog += deny_values(table["ioctl"], 1, SIGNAL_OWNER_IOCTL)
    prog += deny_values(table["prctl"], 0, (PR_SET_DUMPABLE,))
    prog.append(_ret(_ALLOW))
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_SECCOMP = 21
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1


def install(own_pid: int | None = None) -> None:
    """Install the filter on this process (all its threads); irreversible."""
    machine = platform.machine()
    if machine not in _TABLES:
        raise SeccompError(errno.ENOSYS, f"no seccomp table for {machine}")
    program = build_filter(os.getpid() if own_pid is None else own_pid, machine)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise SeccompError(err, f"PR_SET_NO_NEW_PRIVS failed: {os.strerror(err)}")
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(
        ctypes.c_long(_SECCOMP_SYSCALL[machine]),
        ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
        ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.byref(fprog),
    )
    if done != 0:
        err = ctypes.get_errno()
        raise SeccompError(err, f"seccomp filter refused: {os.strerror(err)}")


def mode() -> int:
    """0 = no seccomp, 2 = a filter is active (from /proc/self/status)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Seccomp:"):
                return int(line.split()[1])
    return 0
