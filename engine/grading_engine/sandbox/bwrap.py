"""Start the zygote: bubblewrap inside a user namespace that maps one uid per slot.

The grading process (root) starts `userns_exec.py`, which enters a new user
namespace; the parent then writes its uid map (inside root -> the zygote's
own unprivileged uid, each slot uid -> itself, nothing else) and the helper
execs bwrap as that namespace's root. bwrap builds the read-only root, the
pid, network, ipc and uts namespaces and keeps exactly three capabilities,
valid in that user namespace only: CAP_SYS_ADMIN and CAP_SETUID/SETGID, which
the zygote needs to give each slot its own namespaces, /tmp and uid
(`grading_engine.sandbox.zygote`). Outside, the zygote is a real
unprivileged uid and each slot another: RLIMIT_NPROC binds them and none can
signal another or the grading process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from grading_engine.sandbox.cgroups import SlotCgroup
from grading_engine.sandbox.limits import Limits, set_slot_rlimits
from grading_engine.sandbox.staging import (
    SANDBOX_LIB,
    SANDBOX_TIKTOKEN,
    SANDBOX_VENV,
    Layout,
)

UID_BASE = 61000
USERNS_EXEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "userns_exec.py")
# Valid inside the zygote's user namespace only (bwrap --cap-add).
ZYGOTE_CAPABILITIES = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID")
SANDBOX_TMP = "/tmp"  # noqa: S108 - a private tmpfs inside the sandbox


@dataclass
class Slot:
    """One concurrent sandbox: its uid and (if available) its cgroup."""

    index: int
    uid: int | None  # None: degraded (no bwrap or not root), no uid of its own
    cgroup: SlotCgroup | None = None


def isolated() -> bool:
    """Can this process build the real sandbox (bwrap, and root to map uids)?"""
    return bwrap_path() is not None and os.geteuid() == 0


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
        # numpy asks for transparent huge pages for large arrays; a fault on
        # one may make the kernel compact memory first, in the job's own CPU
        # time. The same right answer then cost 0.4 s or 1.8 s of CPU time by
        # the machine's memory, not its code (0.8 s every time without).
        "NUMPY_MADVISE_HUGEPAGE": "0",
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


def _traversable_parents(*targets: str) -> list[str]:
    """`--perms 0755 --dir` for each directory above the mount targets.

    bwrap, as root of the zygote's namespace, would make them 0700 and its
    own: the slots, other uids, could then not reach /venv or the stdlib.
    """
    parents: list[str] = []
    for target in targets:
        for parent in reversed(Path(target).parents[:-1]):  # "/" excluded
            if str(parent) not in parents:
                parents.append(str(parent))
    return [arg for d in parents for arg in ("--perms", "0755", "--dir", d)]


def command(
    layout: Layout,
    argv: list[str],
    *,
    limits: Limits,
    tiktoken_dir: str | None = None,
) -> list[str]:
    """The bwrap argv that runs `argv` (after the sandbox's python).

    Without the sandbox (allowed only in degraded mode) it is the plain venv
    python, to run with `unsandboxed_environment`: no isolation at all.
    """
    if not isolated():
        return [sys.executable, *argv]
    venv_site = f"{SANDBOX_VENV}/lib/python{layout.python_version}/site-packages"
    interpreter = f"{layout.python_home}/bin/python{layout.python_version}"
    args = [
        bwrap_path() or "bwrap",
        # The user namespace is userns_exec's; bwrap, its root, adds the rest.
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
        *(arg for cap in ZYGOTE_CAPABILITIES for arg in ("--cap-add", cap)),
        "--clearenv",
        "--hostname", "sandbox",
        *_traversable_parents(
            layout.python_home, f"{SANDBOX_VENV}/bin/python", venv_site,
            SANDBOX_LIB, SANDBOX_TIKTOKEN,
        ),
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
    if isolated():
        return {}
    env = environment(layout.grader_stage)
    if tiktoken_dir:
        env["TIKTOKEN_CACHE_DIR"] = tiktoken_dir
    return env


def spawn_zygote(
    args: list[str],
    *,
    zygote_uid: int | None,
    slot_uids: list[int],
    cgroup: SlotCgroup | None,
    limits: Limits,
    env: dict[str, str] | None = None,
    pass_fds: tuple[int, ...] = (),
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
) -> subprocess.Popen:
    """Popen `args` (from `command`) as the zygote, in `cgroup`.

    Isolated, it goes through userns_exec, whose uid map this function
    writes: inside root is `zygote_uid` outside, and each of `slot_uids` is
    itself. Degraded (`zygote_uid` None), `args` run as we are.
    """

    def in_cgroup() -> None:
        # Runs between fork and exec: only os calls.
        if cgroup is not None:
            cgroup.attach(0)
        set_slot_rlimits(limits)

    if zygote_uid is None:
        return subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
            pass_fds=pass_fds, env=env or {}, cwd="/", start_new_session=True,
            preexec_fn=in_cgroup,  # noqa: PLW1509 - only os calls
        )  # fmt: skip
    unshared_r, unshared_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    helper = [sys.executable, "-I", "-S", USERNS_EXEC, str(mapped_r), str(unshared_w)]
    try:
        process = subprocess.Popen(
            [*helper, *args], stdin=subprocess.DEVNULL, stdout=stdout,
            stderr=stderr, pass_fds=(*pass_fds, mapped_r, unshared_w), env={},
            cwd="/", start_new_session=True,
            preexec_fn=in_cgroup,  # noqa: PLW1509 - only os calls
        )  # fmt: skip
    finally:
        os.close(mapped_r)
        os.close(unshared_w)
    try:
        if os.read(unshared_r, 1) != b"u":
            raise OSError("the zygote helper could not enter a user namespace")
        lines = "".join(f"{uid} {uid} 1\n" for uid in slot_uids)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{process.pid}/{name}", "w") as f:
                f.write(f"0 {zygote_uid} 1\n{lines}")
        os.write(mapped_w, b"m")
    except OSError:
        process.kill()
        process.wait()
        raise
    finally:
        os.close(unshared_r)
        os.close(mapped_w)
    return process
