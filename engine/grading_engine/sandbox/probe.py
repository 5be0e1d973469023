"""Which protections this machine really gives, checked by trying them.

`probe_protections` starts one tiny zygote (no torch, ~0.1 s) that sets up
one slot exactly as a pool does, and looks from inside it: its uid, its
namespaces and network interfaces, whether seccomp took, whether an AF_INET
socket or a fork is refused, whether / is read-only. Cgroups are
checked by creating one. Runners call `require` at start: a missing
REQUIRED protection refuses grading unless degraded mode is allowed
explicitly (GRADER_ALLOW_UNSAFE_SANDBOX in the service).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import threading

from grading_engine.sandbox import boot as boot_entry
from grading_engine.sandbox import cgroups
from grading_engine.sandbox.bwrap import (
    UID_BASE,
    bwrap_path,
    command,
    isolated,
    spawn_zygote,
    unsandboxed_environment,
)
from grading_engine.sandbox.limits import Limits
from grading_engine.sandbox.namespaces import NAMESPACES, namespace_ids
from grading_engine.sandbox.staging import prepare_layout

log = logging.getLogger("grading_engine.sandbox")

REQUIRED = (
    "bubblewrap",
    "namespaces",
    "network_isolation",
    "uid_separation",
    "readonly_filesystem",
    "clean_environment",
    "seccomp",
    "rlimits",
)
OPTIONAL = ("cgroup_memory", "cgroup_pids")
PROBE_UID = UID_BASE + 999
PROBE_ZYGOTE_UID = UID_BASE + 998

_EXPLAIN = {
    "bubblewrap": "the bwrap binary (Debian package bubblewrap)",
    "namespaces": "own user, pid, ipc, uts and mount namespaces",
    "network_isolation": "own network namespace holding only loopback",
    "uid_separation": "a real unprivileged uid per slot (parent must be root)",
    "readonly_filesystem": "read-only root and /dev, only a private tmpfs writable",
    "clean_environment": "no inherited environment variables",
    "seccomp": "syscall filter (no ptrace, mount, exec, fork, AF_INET...)",
    "rlimits": "CPU, process, file size, open files and core limits",
    "cgroup_memory": "per-slot memory cgroup (else only RLIMIT_AS applies)",
    "cgroup_pids": "per-slot pids cgroup (else only RLIMIT_NPROC applies)",
}


class SandboxUnavailable(RuntimeError):
    """A required protection is missing and degraded mode is not allowed."""

    def __init__(self, missing: list[str]):
        self.missing = missing
        super().__init__(
            "refusing to grade without: "
            + ", ".join(missing)
            + " (set GRADER_ALLOW_UNSAFE_SANDBOX=1 to grade anyway, UNSAFELY)"
        )


_lock = threading.Lock()
_cache: dict[str, dict] = {}


def probe_protections(*, refresh: bool = False) -> dict[str, bool | str]:
    """Check every protection; cached per process (the machine won't change)."""
    with _lock:
        if refresh or "result" not in _cache:
            _cache["result"] = _probe()
        return dict(_cache["result"])


def _probe() -> dict[str, bool | str]:
    found: dict[str, bool | str] = {name: False for name in REQUIRED + OPTIONAL}
    group = cgroups.create("probe", memory_bytes=Limits().memory_bytes, pids=64)
    if group is not None:
        found["cgroup_memory"] = group.memory_file is not None
        found["cgroup_pids"] = group.pids_file is not None
        found["cgroup_version"] = "v1" if "/memory/" in group.directories[0] else "v2"
        group.remove()
    path = bwrap_path()
    if path is None:
        found["error"] = "bwrap is not installed"
        return found
    found["bubblewrap"] = True
    version = subprocess.run([path, "--version"], capture_output=True, text=True)
    found["bubblewrap_version"] = version.stdout.strip()
    root = os.geteuid() == 0
    limits = Limits()
    slot_uid = PROBE_UID if isolated() else None
    boot = boot_entry.argv(
        "probe", str(slot_uid or "none"), json.dumps(dataclasses.asdict(limits))
    )
    layout = prepare_layout()
    args = command(layout, boot, limits=limits)
    try:
        process = spawn_zygote(
            args,
            zygote_uid=PROBE_ZYGOTE_UID if slot_uid is not None else None,
            slot_uids=[slot_uid] if slot_uid is not None else [],
            cgroup=None,
            limits=limits,
            env=unsandboxed_environment(layout, None),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = process.communicate(timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        found["error"] = f"probe sandbox did not start: {exc}"
        return found
    if process.returncode != 0:
        found["error"] = f"probe sandbox failed: {err.decode(errors='replace')[-500:]}"
        return found
    inside = json.loads(out)
    ours = namespace_ids()
    found["namespaces"] = all(inside["ns"][n] != ours[n] for n in NAMESPACES)
    found["network_isolation"] = inside["ns"]["net"] != ours["net"] and set(
        inside["interfaces"]
    ) <= {"lo"}
    found["uid_separation"] = root and inside["uid"] == PROBE_UID
    # The slot is pid 1 of a pid namespace of its own, alone in it.
    found["namespaces"] = found["namespaces"] and inside.get("pids") == [1]
    found["readonly_filesystem"] = not (
        inside["root_writable"] or inside.get("dev_writable", True)
    )
    expected_env = set(_sandbox_env_keys())
    found["clean_environment"] = set(inside["environ"]) <= expected_env
    found["seccomp"] = bool(inside["seccomp"]) and not inside["inet_socket"]
    got = inside.get("rlimits", {})
    found["rlimits"] = (
        got.get("CORE") == 0
        and got.get("NPROC") == limits.processes
        and got.get("FSIZE") == limits.file_size_bytes
        and got.get("NOFILE") == limits.open_files
        and all(got.get(name, -1) >= 0 for name in ("CPU", "AS"))
    )
    if "seccomp_error" in inside:
        found["error"] = inside["seccomp_error"]
    return found


def _sandbox_env_keys() -> list[str]:
    from grading_engine.sandbox.bwrap import environment

    return [*environment(), "PWD"]  # bwrap sets PWD for --chdir


def missing_required(found: dict[str, bool | str]) -> list[str]:
    return [name for name in REQUIRED if found.get(name) is not True]


def protection_report(found: dict[str, bool | str] | None = None) -> str:
    """A few lines an operator can read: what is on, what is missing."""
    found = probe_protections() if found is None else found
    lines = ["grader sandbox protections:"]
    for name in REQUIRED + OPTIONAL:
        state = "ok" if found.get(name) is True else "MISSING"
        kind = "required" if name in REQUIRED else "optional"
        lines.append(f"  [{state:>7}] {name} ({kind}): {_EXPLAIN[name]}")
    for key in ("bubblewrap_version", "cgroup_version", "error"):
        if found.get(key):
            lines.append(f"  {key}: {found[key]}")
    return "\n".join(lines)


def require(*, allow_degraded: bool) -> dict[str, bool | str]:
    """Probe; raise SandboxUnavailable, or warn loudly when allowed to."""
    found = probe_protections()
    log.info("%s", protection_report(found))
    missing = missing_required(found)
    if missing and not allow_degraded:
        raise SandboxUnavailable(missing)
    if missing:
        log.warning(
            "UNSAFE SANDBOX: grading learner code WITHOUT %s because degraded "
            "mode is allowed (GRADER_ALLOW_UNSAFE_SANDBOX). Do not run this "
            "in production.",
            ", ".join(missing),
        )
    return found
