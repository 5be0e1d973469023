"""Per-slot memory and pids cgroups (v2, or v1 controllers), when writable.

A memory cgroup is the only memory cap that torch survives (RLIMIT_AS low
enough to matter breaks `import torch`), and a pids cgroup caps processes
regardless of uid. Both are optional: where /sys/fs/cgroup is read-only
(a default container) the slot runs without them and the probe says so.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

ROOT = "/sys/fs/cgroup"
VMSTAT = "/proc/vmstat"  # a test points it at a file of its own


def _own_path(controller: str | None) -> str:
    """This process's cgroup path for `controller` (None = the v2 hierarchy)."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, names, path = line.rstrip("\n").split(":", 2)
            if controller is None and names == "":
                return path
            if controller is not None and controller in names.split(","):
                return path
    return "/"


def _writable(directory: str) -> bool:
    return os.path.isdir(directory) and os.access(directory, os.W_OK)


@dataclass
class SlotCgroup:
    """The cgroup directories of one slot; `attach` moves a pid into all."""

    name: str
    directories: list[str]
    memory_file: str | None = None
    pids_file: str | None = None
    oom_file: str | None = None  # memory.events (v2) / memory.oom_control (v1)

    def attach(self, pid: int = 0) -> None:
        """Join every directory; pid 0 means the calling process.

        Called in a forked child before exec, so it only uses os calls.
        """
        data = str(pid).encode()
        for directory in self.directories:
            fd = os.open(os.path.join(directory, "cgroup.procs"), os.O_WRONLY)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for directory in self.directories:
            try:
                with open(os.path.join(directory, "cgroup.procs")) as f:
                    found.update(int(line) for line in f if line.strip())
            except OSError:
                pass
        return found

    def kill_all(self) -> None:
        """SIGKILL whatever is left in the slot (we run as root outside)."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def oom_kills(self) -> int:
        """How many of this slot's processes an OOM killer took: its own
        limit's, or the host's (the kernel counts both here)."""
        return _counter(self.oom_file, "oom_kill")

    def limit_hits(self) -> int:
        """How many times this slot reached its own memory limit (v2: the
        `oom` event; v1: memory.failcnt). A host's OOM kill leaves it as is."""
        if self.oom_file is None:
            return 0
        if self.oom_file.endswith("memory.events"):
            return _counter(self.oom_file, "oom")
        directory = os.path.dirname(self.oom_file)
        return _counter(os.path.join(directory, "memory.failcnt"), None)

    def remove(self) -> None:
        self.kill_all()
        for directory in self.directories:
            try:
                os.rmdir(directory)
            except OSError:
                pass


def _counter(path: str | None, key: str | None) -> int:
    """The value of `key` in a flat keyed file, or the file's one number."""
    if path is None:
        return 0
    try:
        with open(path) as f:
            for line in f:
                name, _, value = line.strip().partition(" ")
                if key is None:
                    return int(name)
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def host_oom_kills() -> int:
    """OOM kills on the whole host since boot (/proc/vmstat)."""
    return _counter(VMSTAT, "oom_kill")


def _write(path: str, value: int) -> None:
    with open(path, "w") as f:
        f.write(str(value))


def create(name: str, *, memory_bytes: int, pids: int) -> SlotCgroup | None:
    """Make (or reuse) the slot cgroup `name`; None where not possible."""
    v2 = os.path.join(ROOT, "cgroup.controllers")
    if os.path.exists(v2):
        return _create_v2(name, memory_bytes, pids)
    return _create_v1(name, memory_bytes, pids)


def _create_v2(name: str, memory_bytes: int, pids: int) -> SlotCgroup | None:
    own = _own_path(None).strip("/")
    # A process may not sit in an inner node that delegates controllers, so
    # slots live next to us, under our parent (the root may do both).
    base = os.path.join(ROOT, os.path.dirname(own)) if own else ROOT
    if not _writable(base):
        return None
    try:
        with open(os.path.join(base, "cgroup.controllers")) as f:
            available = f.read().split()
        wanted = [c for c in ("memory", "pids") if c in available]
        with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
            f.write(" ".join("+" + c for c in wanted))
        directory = os.path.join(base, f"grader-{name}")
        os.makedirs(directory, exist_ok=True)
        group = SlotCgroup(name, [directory])
        if "memory" in wanted:
            group.memory_file = os.path.join(directory, "memory.max")
            _write(group.memory_file, memory_bytes)
            _write(os.path.join(directory, "memory.swap.max"), 0)
            group.oom_file = os.path.join(directory, "memory.events")
        if "pids" in wanted:
            group.pids_file = os.path.join(directory, "pids.max")
            _write(group.pids_file, pids)
        return group if group.memory_file or group.pids_file else None
    except OSError:
        return None


def _create_v1(name: str, memory_bytes: int, pids: int) -> SlotCgroup | None:
    group = SlotCgroup(name, [])
    for controller in ("memory", "pids"):
        mount = os.path.join(ROOT, controller)
        parent = os.path.join(mount, _own_path(controller).lstrip("/"))
        if not _writable(parent):
            continue
        directory = os.path.join(parent, f"grader-{name}")
        try:
            os.makedirs(directory, exist_ok=True)
            if controller == "memory":
                _write(os.path.join(directory, "memory.limit_in_bytes"), memory_bytes)
                group.memory_file = os.path.join(directory, "memory.limit_in_bytes")
                group.oom_file = os.path.join(directory, "memory.oom_control")
            else:
                _write(os.path.join(directory, "pids.max"), pids)
                group.pids_file = os.path.join(directory, "pids.max")
            group.directories.append(directory)
        except OSError:
            continue
    return group if group.directories else None
