"""What the sandbox can see: a read-only interpreter, site-packages and the engine.

The sandbox gets a fake venv at /venv (pyvenv.cfg, a python symlink and the
project venv's site-packages bound read-only), the interpreter at its own
path, and a staged copy of only the plain-Python engine packages the child
imports, with the parent-only answer modules replaced by stubs. Nothing else
of the project tree is visible.

An interpreter below a directory the slot uids cannot traverse (pyenv under
/root) is staged as a hard-linked copy in a directory they can read; hard
links cost no space and are made once per process.
"""

from __future__ import annotations

import atexit
import compileall
import os
import py_compile
import shutil
import stat
import sys
import sysconfig
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from grading_engine.sandbox.pruning import prune_stage

# The packages `python -m grading_engine.harness` and the warm worker import.
CHILD_PACKAGES = ("harness", "exercises", "checks", "reference", "sandbox")
CHILD_MODULES = (
    "__init__.py",
    "gc_policy.py",
    "json_nesting.py",
    "lazy.py",
    "runner.py",
)
# Answer code the child never runs (parameter counts, the HF converter, the
# functional GPT-2 behind the fingerprints): the stage holds a stub in its
# place, so harness modules that import names from it still load, and a
# learner who gets past grading_engine.harness.guard finds nothing to call.
PARENT_ONLY = (
    "reference/counts.py",
    "reference/weights.py",
    "checks/fingerprints.py",
)
# Modules the child runs but whose source is the solution to several
# exercises (the reference GPT's forward pass): staged as bytecode only, so
# a submission cannot print the reference implementation.
SOURCELESS = ("reference/model.py",)
_STUB = '''"""{module} runs in the trusted parent only (not staged in the sandbox)."""


class ParentOnly:
    """A name of a parent-only module: importable, but refuses to be used."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{{self.name}} is not available in the sandbox")

    def __repr__(self):
        return f"<parent-only {{self.name}}>"


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return ParentOnly(f"{{__name__}}.{{name}}")
'''
GRADER_ROOT = Path(__file__).resolve().parents[1]

SANDBOX_VENV = "/venv"
SANDBOX_LIB = "/sandbox/lib"  # holds the staged `grading_engine` package
SANDBOX_TIKTOKEN = "/sandbox/tiktoken"


@dataclass(frozen=True)
class Layout:
    """Host paths the sandbox is built from."""

    python_home: str  # the interpreter's prefix, as seen inside the sandbox
    python_home_source: str  # where bwrap binds it from (maybe a staged copy)
    python_version: str  # "3.11"
    site_packages: str
    grader_stage: str  # a directory holding a read-only `grading_engine/`
    pyvenv_cfg: str

    @property
    def python(self) -> str:
        return f"{SANDBOX_VENV}/bin/python"


_lock = threading.Lock()
_cached: dict[str, Layout] = {}


def world_traversable(path: str) -> bool:
    """Can any uid reach `path` (search bit for others on every ancestor)?"""
    current = Path(path).resolve()
    for directory in [current, *current.parents]:
        try:
            mode = directory.stat().st_mode
        except OSError:
            return False
        if not mode & stat.S_IXOTH:
            return False
    return True


def _python_home() -> str:
    return os.path.realpath(sys.base_prefix)


def _site_packages() -> str:
    return os.path.realpath(sysconfig.get_paths()["purelib"])


def _stage_root() -> str:
    _remove_orphans()
    root = tempfile.mkdtemp(prefix=f"grader-sandbox-{os.getpid()}-")
    os.chmod(root, 0o755)  # noqa: S103 - slot uids must read it; nothing secret
    return root


def _remove_orphans() -> None:
    """Remove stages of processes that died without running atexit.

    Celery's prefork children leave with os._exit, so their stage stays;
    the pid in its name tells whether its owner is still alive.
    """
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        parts = name.split("-")
        if name.startswith("grader-sandbox-") and len(parts) >= 4:
            if parts[2].isdigit() and not os.path.exists(f"/proc/{parts[2]}"):
                shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _stage_python(home: str, root: str) -> str:
    """Hard-link the interpreter and stdlib (no site-packages) under `root`."""
    target = os.path.join(root, "python")
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    skip = {
        os.path.join(home, "lib", f"python{version}", "site-packages"),
        os.path.join(home, "lib", f"python{version}", "test"),
        os.path.join(home, "include"),
        os.path.join(home, "share"),
    }
    for directory, dirs, files in os.walk(home):
        dirs[:] = [d for d in dirs if os.path.join(directory, d) not in skip]
        out = os.path.join(target, os.path.relpath(directory, home))
        os.makedirs(out, mode=0o755, exist_ok=True)
        for name in files:
            src = os.path.join(directory, name)
            dst = os.path.join(out, name)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            else:
                _link_or_copy(src, dst)
    return target


def _stage_grader(root: str) -> str:
    """A fresh read-only copy of only the packages the child needs."""
    stage = os.path.join(root, "lib")
    package = os.path.join(stage, "grading_engine")
    os.makedirs(package, mode=0o755)
    for name in CHILD_MODULES:
        shutil.copy(GRADER_ROOT / name, os.path.join(package, name))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in CHILD_PACKAGES:
        if (GRADER_ROOT / name).is_dir():
            shutil.copytree(
                GRADER_ROOT / name, os.path.join(package, name), ignore=ignore
            )
    prune_stage(package, skip=PARENT_ONLY)  # run_case stays, check_case goes
    for relative in PARENT_ONLY:
        module = "grading_engine." + relative.removesuffix(".py").replace("/", ".")
        with open(os.path.join(package, relative), "w") as f:
            f.write(_STUB.format(module=module))
    compileall.compile_dir(package, quiet=1)  # the sandbox cannot write .pyc
    for relative in SOURCELESS:
        source = os.path.join(package, relative)
        py_compile.compile(source, cfile=source + "c", doraise=True)
        os.remove(source)  # Python imports the bare .pyc next to it
    for directory, _, files in os.walk(stage):
        os.chmod(directory, 0o755)  # noqa: S103 - read-only in the sandbox
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
    return stage


def prepare_layout() -> Layout:
    """Stage what the sandbox needs (once per process) and describe it."""
    with _lock:
        if "layout" in _cached:
            return _cached["layout"]
        home = _python_home()
        root = _stage_root()
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        source = home if world_traversable(home) else _stage_python(home, root)
        version = f"{sys.version_info.major}.{sys.version_info.minor}"
        cfg = os.path.join(root, "pyvenv.cfg")
        with open(cfg, "w") as f:
            f.write(
                f"home = {home}/bin\ninclude-system-site-packages = false\n"
                f"version = {sys.version_info.major}.{sys.version_info.minor}."
                f"{sys.version_info.micro}\n"
            )
        os.chmod(cfg, 0o644)
        layout = Layout(
            python_home=home,
            python_home_source=source,
            python_version=version,
            site_packages=_site_packages(),
            grader_stage=_stage_grader(root),
            pyvenv_cfg=cfg,
        )
        _cached["layout"] = layout
        return layout
