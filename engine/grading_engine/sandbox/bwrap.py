"""Start a process inside bubblewrap as a slot's own unprivileged uid.

The parent (root) forks, joins the slot's cgroups, sets the slot rlimits,
drops to the slot uid and only then execs bwrap. bwrap, now unprivileged,
creates a user namespace mapping that uid to itself, so everything inside
runs as a real unprivileged uid outside too: RLIMIT_NPROC binds it and it
cannot signal another slot or the parent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from grading_engine.sandbox.cgroups import SlotCgroup
from grading_engine.sandbox.limits import Limits, set_slot_rlimits
from grading_engine.sandbox.staging import (
    SANDBOX_LIB,
    SANDBOX_TIKTOKEN,
    SANDBOX_VENV,
    Layout,
)

UID_BASE = 61000
SANDBOX_TMP = "/tmp"  # noqa: S108 - a private tmpfs inside the sandbox


@dataclass
class Slot:
    """One concurrent sandbox: its uid and (if available) its cgroup."""

    index: int
    uid: int | None  # None: not root, so no uid of its own (degraded)
    cgroup: SlotCgroup | None = None


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def environment(lib: str = SANDBOX_LIB) -> dict[str, str]:
    """The whole environment inside the sandbox; nothing is inherited."""
    return {
        "PATH": f"{SANDBOX_VENV}/bin:/usr/bin:/bin",
        "HOME": SANDBOX_TMP,
        "TMPDIR": SANDBOX_TMP,
        "LANG": "C.UTF-8",
        "PYTHONPATH": lib,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }


def _usr_merge() -> list[str]:
    args = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        host = f"/{name}"
        if os.path.islink(host):
            args += ["--symlink", os.readlink(host), host]
        elif os.path.isdir(host):
            args += ["--ro-bind", host, host]
    return args


def command(
    layout: Layout,
    argv: list[str],
    *,
    limits: Limits,
    tiktoken_dir: str | None = None,
) -> list[str]:
    """The bwrap argv that runs `argv` (after the sandbox's python).

    Without bwrap (allowed only in degraded mode) it is the plain venv
    python, to run with `unsandboxed_environment`: no isolation at all.
    """
    if bwrap_path() is None:
        return [sys.executable, *argv]
    venv_site = f"{SANDBOX_VENV}/lib/python{layout.python_version}/site-packages"
    interpreter = f"{layout.python_home}/bin/python{layout.python_version}"
    args = [
        bwrap_path() or "bwrap",
        "--unshare-all",  # user, pid, net, ipc, uts, cgroup
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        "--clearenv",
        "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr",
        *_usr_merge(),
        "--ro-bind", layout.python_home_source, layout.python_home,
        "--ro-bind", layout.pyvenv_cfg, f"{SANDBOX_VENV}/pyvenv.cfg",
        "--symlink", interpreter, f"{SANDBOX_VENV}/bin/python",
        "--ro-bind", layout.site_packages, venv_site,
        "--ro-bind", layout.grader_stage, SANDBOX_LIB,
    ]  # fmt: skip
    if tiktoken_dir:
        # The GPT-2 BPE files, so tiktoken (ours and the learner's) never
        # needs the network.
        args += ["--ro-bind", tiktoken_dir, SANDBOX_TIKTOKEN]
        args += ["--setenv", "TIKTOKEN_CACHE_DIR", SANDBOX_TIKTOKEN]
    # /dev is a tmpfs of its own (device nodes, /dev/shm): read-only like the
    # root, so the sized, scrubbed /tmp is the only place a job can write.
    args += [
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(limits.tmp_bytes), "--tmpfs", SANDBOX_TMP,
        "--remount-ro", "/dev",
        "--remount-ro", "/",
        "--chdir", SANDBOX_TMP,
    ]  # fmt: skip
    for key, value in environment().items():
        args += ["--setenv", key, value]
    return [*args, layout.python, *argv]


def unsandboxed_environment(layout: Layout, tiktoken_dir: str | None) -> dict:
    """The environment to start `command()` with.

    Empty with bwrap (it builds the sandbox's own with --clearenv and
    --setenv); without it (degraded) the child's, with host paths.
    """
    if bwrap_path() is not None:
        return {}
    env = environment(layout.grader_stage)
    if tiktoken_dir:
        env["TIKTOKEN_CACHE_DIR"] = tiktoken_dir
    return env


def spawn(
    args: list[str],
    *,
    slot: Slot,
    limits: Limits,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
    stdin=subprocess.DEVNULL,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
) -> subprocess.Popen:
    """Popen `args` in the slot's cgroup, with its rlimits, as its uid."""
    uid, cgroup = slot.uid, slot.cgroup

    def drop_privileges() -> None:
        # Runs between fork and exec: cgroup first (needs root), uid last.
        if cgroup is not None:
            cgroup.attach(0)
        set_slot_rlimits(limits)
        if uid is None:
            return
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)

    return subprocess.Popen(
        args,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        pass_fds=pass_fds,
        env=env or {},
        cwd="/",
        start_new_session=True,
        preexec_fn=drop_privileges,  # noqa: PLW1509 - only os calls, see above
    )
