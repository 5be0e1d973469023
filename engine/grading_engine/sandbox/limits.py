"""Resource limits for one sandboxed grade, and the rlimits that enforce them."""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class Limits:
    """What one slot (a warm worker or a cold run) may use.

    `memory_bytes` is the slot's memory cgroup cap (warm worker plus the job
    it forked), the real memory limit where cgroups are writable.
    `address_space_extra` is added to the process's current address space
    when a job starts: torch reserves several GB of virtual memory it never
    touches, so a fixed RLIMIT_AS small enough to matter breaks it.
    """

    cpu_seconds: int = 60
    memory_bytes: int = 3 * GIB
    address_space_extra: int = 4 * GIB
    processes: int = 64  # per slot uid: threads count too
    pids: int = 128  # pids cgroup cap for the whole slot
    file_size_bytes: int = 16 * MIB
    open_files: int = 256
    tmp_bytes: int = 64 * MIB
    output_bytes: int = 64_000  # kept of stdout and of stderr each
    output_kill_bytes: int = 16 * MIB  # total output that ends the job
    result_bytes: int = 64 * MIB
    # False only in degraded mode, where the kernel may refuse the filter.
    require_seccomp: bool = True


def set_slot_rlimits(limits: Limits) -> None:
    """Rlimits for a whole sandbox, set before bwrap runs (inherited).

    Only async-signal-safe work: this runs in a freshly forked child.
    """
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(
        resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes)
    )


def set_job_rlimits(limits: Limits, *, cpu_seconds: int) -> None:
    """Tighter rlimits for the process that runs learner code.

    RLIMIT_CPU counts the process's whole life, so the CPU already spent
    (importing torch on the cold path) is added to the job's budget.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime) + cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(
        resource.RLIMIT_FSIZE, (limits.file_size_bytes, limits.file_size_bytes)
    )
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    cap = _address_space() + limits.address_space_extra
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _address_space() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0
