"""The learner edition of the engine: what `course check` needs, and no answers.

`pip install ./engine` would give a learner the whole engine: the quiz
templates' keys (quiz_bank), the reference GPT-2's source (which solves
several exercises), every harness's reference solution, its known wrong
computations and its hidden cases. The learner edition is built from the
same files, and holds only:

* the runner side (harness/, runner, wire format) and each exercise's
  `run_case` with the case builders it uses (exercises/kit, without the
  draws of hidden cases), as the sandbox gets them;
* each exercise's `check_case` and the judges it calls (checks/), with every
  `@expectation` body cut out (grading_engine.expected): the values they
  compute come from the server, for the visible cases only;
* the reference model as bytecode only (reference/model.pyc), as in the
  sandbox: the learner's code is handed reference models to work on, so
  their class must exist, but not as readable source. The wheel is tagged
  for this interpreter's version (cp311) because bytecode is.

Left out: quiz_bank/, sandbox/, reference/counts.py and reference/weights.py
(answers), every `make_cases` (hidden cases are drawn on the server only;
the visible ones come with the exercise), every `reference` function.

`build(out_dir)` writes the two wheels the service serves (this edition as
`grading-engine 1.0.0+learner`, and the client, which depends on
`grading-engine==1.0.0`) and one local-check bundle per harness (the visible
cases and what the server's expectations computed for them), with a
manifest. `python -m grading_engine.learner_edition OUT_DIR [--client DIR]`.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import py_compile
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from grading_engine import __version__
from grading_engine.sandbox.pruning import EXERCISE_ROOTS, prune_stage

ENGINE_ROOT = Path(__file__).resolve().parent  # .../grading_engine
# The checkout's client, when the engine is installed editable from it.
DEFAULT_CLIENT = ENGINE_ROOT.parents[1] / "client"
TOP_MODULES = (
    "__init__.py",
    "authored.py",
    "expected.py",
    "grading.py",
    "json_nesting.py",
    "lazy.py",
    "runner.py",
    "source.py",
    "terminal.py",
)
PACKAGES = ("harness", "exercises", "checks", "reference")
LEFT_OUT = ("reference/counts.py", "reference/weights.py")
SOURCELESS = ("reference/model.py",)
# What the learner edition's judge uses of an exercise module, on top of
# what the child does: check_case, the tolerances an exercise may override
# (grading.tolerances) and what shared_checks reads.
LEARNER_ROOTS = (*EXERCISE_ROOTS, "check_case", "RTOL", "ATOL", "MODEL_CHANGES")
LOCAL_VERSION = "learner"
MANIFEST = "manifest.json"
BUNDLE_DIR = "checks"


def stage(dest: str | os.PathLike) -> Path:
    """Write the learner edition's `grading_engine` package under `dest`."""
    package = Path(dest) / "grading_engine"
    package.mkdir(parents=True)
    for name in TOP_MODULES:
        shutil.copy(ENGINE_ROOT / name, package / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in PACKAGES:
        shutil.copytree(ENGINE_ROOT / name, package / name, ignore=ignore)
    for relative in LEFT_OUT:
        (package / relative).unlink()
    pruned = prune_stage(
        str(package),
        exercise_roots=LEARNER_ROOTS,
        stubs=True,
        subpackages=("exercises/kit",),  # its hidden cases' draws go too
    )
    for relative in pruned:
        _strip_docstrings(package / relative)
    for relative in SOURCELESS:
        source = package / relative
        py_compile.compile(
            str(source),
            cfile=str(source) + "c",
            dfile=f"grading_engine/{relative}",
            doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        source.unlink()  # Python imports the bare .pyc next to it
    return package


def _strip_docstrings(path: Path) -> None:
    """Drop a pruned module's docstrings: a harness's notes explain the answer
    (its formula, the reference's steps). The feedback messages stay."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(
            node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
        ):
            continue
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            if isinstance(body[0].value.value, str):
                body.pop(0)
        if not body:
            body.append(ast.Pass())
    module = path.relative_to(path.parents[1]).with_suffix("").as_posix()
    note = f"{module}: the learner edition's copy (grading_engine.learner_edition)."
    tree.body.insert(0, ast.Expr(ast.Constant(note)))
    path.write_text(
        ast.unparse(ast.fix_missing_locations(tree)) + "\n", encoding="utf-8"
    )


def _engine_project() -> dict:
    """engine/pyproject.toml's [project], or the installed one's metadata."""
    pyproject = ENGINE_ROOT.parent / "pyproject.toml"
    if pyproject.exists():
        with pyproject.open("rb") as f:
            return tomllib.load(f)["project"]
    from importlib.metadata import metadata, requires

    meta = metadata("grading-engine")
    return {
        "version": meta["Version"],
        "dependencies": list(requires("grading-engine") or []),
    }


def _python_tag() -> str:
    return f"cp{sys.version_info.major}{sys.version_info.minor}"


def write_project(root: Path) -> None:
    """The learner edition's pyproject.toml and setup.cfg beside its package."""
    project = _engine_project()
    version = f"{project['version']}+{LOCAL_VERSION}"
    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    dependencies = ",\n".join(f"    {json.dumps(d)}" for d in project["dependencies"])
    (root / "pyproject.toml").write_text(
        f"""# Generated by grading_engine.learner_edition: the engine a learner's
# `course check` runs, without the answers (see that module).
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "grading-engine"
version = "{version}"
description = "The GPT-2 course's grading engine for learners: checks, no answers"
requires-python = "=={minor}.*"
dependencies = [
{dependencies},
]

[tool.setuptools.packages.find]
include = ["grading_engine*"]

[tool.setuptools.package-data]
"grading_engine.reference" = ["*.pyc"]
""",
        encoding="utf-8",
    )
    # Bytecode runs on this interpreter's version only: say so in the tag.
    (root / "setup.cfg").write_text(
        f"[bdist_wheel]\npython_tag = {_python_tag()}\n", encoding="utf-8"
    )


def pip_wheel(source: Path, out: Path) -> Path:
    """`source` built as a wheel into `out`, offline (no build isolation:
    setuptools comes from this environment); returns the new wheel."""
    before = set(out.glob("*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = set(out.glob("*.whl")) - before
    return wheel


def build_wheels(out: str | os.PathLike, client: str | os.PathLike) -> list[Path]:
    """The learner edition's wheel and the client's, built offline into `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info")
    with tempfile.TemporaryDirectory(prefix="learner-edition-") as tmp:
        edition = Path(tmp) / "engine"
        stage(edition)
        write_project(edition)
        # Built from copies: setuptools writes build/ and egg-info beside them.
        client_copy = Path(tmp) / "client"
        shutil.copytree(client, client_copy, ignore=ignore)
        return [pip_wheel(edition, out), pip_wheel(client_copy, out)]


def bundle(harness: str) -> bytes:
    """A harness's local-check bundle: its visible cases and their expectations."""
    from grading_engine.exercises.base import load_harness
    from grading_engine.expected import compute, encode

    module = load_harness(harness)
    # Visible cases are the same for every seed (tests hold every harness to it).
    cases = [case for case in module.make_cases(0) if not case.get("hidden")]
    return encode(
        harness=harness,
        engine=__version__,
        cases=cases,
        expected=compute(module, cases),
    )


def write_bundles(out: str | os.PathLike, harnesses: list[str] | None = None) -> dict:
    """Every harness's bundle under out/checks/; {harness: file, sha256, bytes}."""
    from grading_engine.exercises.base import harness_slugs

    directory = Path(out) / BUNDLE_DIR
    directory.mkdir(parents=True, exist_ok=True)
    found = {}
    for harness in harnesses or harness_slugs():
        blob = bundle(harness)
        name = f"{harness}.bin"
        (directory / name).write_bytes(blob)
        found[harness] = {
            "file": f"{BUNDLE_DIR}/{name}",
            "sha256": hashlib.sha256(blob).hexdigest(),
            "bytes": len(blob),
        }
    return found


def build(
    out: str | os.PathLike,
    *,
    client: str | os.PathLike = DEFAULT_CLIENT,
    harnesses: list[str] | None = None,
) -> dict:
    """Wheels, bundles and the manifest the service serves them from."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    wheels = build_wheels(out, client)
    manifest = {
        "engine": __version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "wheels": [wheel.name for wheel in wheels],
        "checks": write_bundles(out, harnesses),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m grading_engine.learner_edition",
        description="Build the learner client's wheels and local-check bundles.",
    )
    parser.add_argument("out", help="the directory the service serves them from")
    parser.add_argument("--client", default=str(DEFAULT_CLIENT), help="client/ source")
    args = parser.parse_args(argv)
    manifest = build(args.out, client=args.client)
    total = sum(item["bytes"] for item in manifest["checks"].values())
    print(
        f"{', '.join(manifest['wheels'])}; {len(manifest['checks'])} local-check "
        f"bundles ({total / 1e6:.1f} MB) in {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
