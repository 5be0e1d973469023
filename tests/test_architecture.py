"""The floor plan holds: no import cycles, and an engine that stands alone.

The layer rules themselves are import-linter contracts (pyproject.toml, run by
`make test` as `lint-imports`); these tests cover what a contract cannot say:
a cycle anywhere, and an engine that really installs and imports without the
web service.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import grimp
import pytest
from grading_engine.learner_edition import pip_wheel

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ENGINE_ROOT = PROJECT_ROOT / "engine"
PACKAGES = ("grading_engine", "quiz", "grader", "teaching", "lms", "config")


def import_cycles(graph) -> list[list[str]]:
    """Strongly connected groups of two or more modules (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    imported = graph.find_modules_directly_imported_by(child)
                    work.append((child, iter(sorted(imported))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


@pytest.fixture(scope="module")
def graph():
    # Imports inside functions count: a cycle hidden in a function is a cycle.
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def test_no_import_cycles(graph):
    assert import_cycles(graph) == []


def test_cycle_finder_finds_a_planted_cycle(graph):
    graph.add_import(importer="grader.models", imported="grader.tasks")
    graph.add_import(importer="grader.tasks", imported="grader.models")
    cycles = import_cycles(graph)
    assert any({"grader.models", "grader.tasks"} <= set(group) for group in cycles)
    graph.remove_import(importer="grader.models", imported="grader.tasks")


def test_engine_imports_without_django():
    """Every engine module loads in a fresh interpreter that never sees Django."""
    script = """
import importlib, json, pkgutil, sys
import grading_engine
found = pkgutil.walk_packages(grading_engine.__path__, "grading_engine.")
names = [m.name for m in found]
for name in names:
    importlib.import_module(name)
web = sorted({m.split(".")[0] for m in sys.modules} & {
    "django", "rest_framework", "celery", "quiz", "grader", "teaching", "config"})
print(json.dumps({"modules": len(names), "web": web, "file": grading_engine.__file__}))
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ENGINE_ROOT,  # not the project root: nothing of the service on the path
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ENGINE_ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    facts = json.loads(out.stdout.strip().splitlines()[-1])
    assert facts["web"] == []
    assert facts["modules"] > 60  # the whole engine, exercise harnesses included
    assert facts["file"].startswith(str(ENGINE_ROOT))


def test_a_web_process_imports_no_torch():
    """The web serves pages and queues grades; torch (3 to 4 s to import,
    hundreds of MB) is for the workers that judge. Django set up, the WSGI
    application and every URL's view loaded: still no torch."""
    script = """
import json, sys
import django
django.setup()
from django.urls import get_resolver
import config.wsgi
get_resolver().url_patterns
print(json.dumps({"torch": "torch" in sys.modules}))
"""
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=PROJECT_ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "architecture-test",
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"torch": False}


@pytest.mark.slow
def test_engine_builds_as_its_own_wheel(tmp_path):
    """`pip install ./engine` works on its own: the wheel holds every module."""
    # Built from a copy: setuptools writes build/ and egg-info beside the source.
    source = tmp_path / "engine"
    shutil.copytree(
        ENGINE_ROOT, source, ignore=shutil.ignore_patterns("build", "*.egg-info")
    )
    wheel = pip_wheel(source, tmp_path / "wheels")
    with zipfile.ZipFile(wheel) as archive:
        packed = {name for name in archive.namelist() if name.endswith(".py")}
        metadata = next(n for n in archive.namelist() if n.endswith("/METADATA"))
        requires = archive.read(metadata).decode()
    sources = {
        path.relative_to(ENGINE_ROOT).as_posix()
        for path in (ENGINE_ROOT / "grading_engine").rglob("*.py")
    }
    assert sources and sources <= packed
    assert "Requires-Dist: torch==2.13.0" in requires
    assert "django" not in requires.lower()


def _contracts() -> list[dict]:
    import tomllib

    with open(PROJECT_ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]["contracts"]


def _plant(contract: dict) -> tuple[str, str]:
    """(module to edit, import to add) that breaks `contract`."""
    if contract["type"] == "forbidden":
        return contract["source_modules"][0], contract["forbidden_modules"][0]
    if contract["type"] == "layers":
        return contract["layers"][-1], contract["layers"][0]
    if contract["type"] == "independence":
        first, second = _concrete(contract["modules"])[:2]
        return first, second
    raise AssertionError(f"no planting rule for {contract['type']} contracts")


def _concrete(modules: list[str]) -> list[str]:
    """Modules named by a list that may end in `.*` (one level of children)."""
    names = []
    for module in modules:
        if not module.endswith(".*"):
            names.append(module)
            continue
        parent = module.removesuffix(".*")
        folder = _module_file(ENGINE_ROOT, parent).parent
        names += sorted(
            f"{parent}.{path.stem}"
            for path in folder.glob("*.py")
            if path.stem not in ("__init__", "base")
        )
    return names


def _module_file(root: Path, module: str) -> Path:
    path = root.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _lint_copy(tmp_path: Path, planted: tuple[str, str] | None):
    """lint-imports over a copy of the code, with one import added."""
    root = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for package in ("quiz", "grader", "teaching", "lms", "config"):
        shutil.copytree(PROJECT_ROOT / package, root / package, ignore=ignore)
    shutil.copytree(
        ENGINE_ROOT / "grading_engine", root / "grading_engine", ignore=ignore
    )
    shutil.copytree(PROJECT_ROOT / "client" / "course", root / "course", ignore=ignore)
    shutil.copy(PROJECT_ROOT / "pyproject.toml", root / "pyproject.toml")
    if planted:
        module, imported = planted
        target = _module_file(root, module)
        target.write_text(target.read_text() + f"\nimport {imported}  # planted\n")
    linter = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(linter), "--no-cache"],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_import_contracts_hold_on_a_copy(tmp_path):
    result = _lint_copy(tmp_path, None)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("contract", _contracts(), ids=lambda c: c["type"])
def test_each_import_contract_can_fail(tmp_path, contract):
    """One forbidden import, planted in a copy, breaks exactly that contract."""
    result = _lint_copy(tmp_path, _plant(contract))
    assert result.returncode == 1, result.stdout + result.stderr
    # lint-imports wraps long lines: compare without whitespace.
    squeezed = "".join(result.stdout.split())
    assert "".join(f"{contract['name']} BROKEN".split()) in squeezed
    assert squeezed.count("BROKEN") == 1
