"""What a learner installs carries no answers (issue 43, items 5 and 6).

The wheels the service serves (`make client`: the learner edition of the
engine and the client) are built offline from this checkout and read file by
file against a deny list: the quiz templates' keys, the reference model's
source, any exercise's reference solution, the functional GPT-2 behind the
known mistakes, the hidden cases' generators, and any content file (which
holds every `solution:`). The same list fails the wheel `pip install
./engine` builds, the install text of old: it would catch a regression.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from grading_engine.learner_edition import pip_wheel

from tests.conftest import PROJECT_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("client")]

# Files a learner's machine must not get, by path.
DENIED_PATHS = {
    re.compile(r"(^|/)quiz_bank/"): "the quiz bank (answers.py keys every template)",
    re.compile(r"(^|/)reference/model\.py$"): "the reference model's source",
    re.compile(r"(^|/)reference/counts\.py$"): "the parameter counts' answers",
    re.compile(r"(^|/)reference/weights\.py$"): "the HF converter (an answer)",
    re.compile(r"(^|/)content/|\.ya?ml$"): "course content (every solution:)",
}
# ... and by what a Python file defines (read with ast: a docstring that
# describes a harness's contract defines nothing).
DENIED_DEFS = {
    "reference": "a reference solution",
    "make_cases": "a hidden-case generator",
    "gpt2_logits": "a reference forward (the functional GPT-2)",
    "attend": "a reference attention",
    "Flaws": "the functional GPT-2's switches",
}


def _defines(text: str) -> list[str]:
    """Why a module's source is refused: what it defines, hidden-case specs."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and (
            node.name in DENIED_DEFS
        ):
            found.append(DENIED_DEFS[node.name])
        if isinstance(node, ast.Dict) and any(
            isinstance(k, ast.Constant)
            and k.value == "hidden"
            and isinstance(v, ast.Constant)
            and v.value is True
            for k, v in zip(node.keys, node.values, strict=True)
        ):
            found.append("a hidden case")
    return found


def denied(wheel: Path) -> list[str]:
    """Every file of `wheel` the deny list refuses, and why."""
    found = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            for pattern, why in DENIED_PATHS.items():
                if pattern.search(name):
                    found.append(f"{name}: {why}")
            if name.endswith(".py"):
                text = archive.read(name).decode("utf-8")
                found += [f"{name}: {why}" for why in sorted(set(_defines(text)))]
    return found


def test_the_served_wheels_hold_no_answer(client_dist):
    wheels = sorted(client_dist.glob("*.whl"))
    names = {wheel.name.split("-")[0] for wheel in wheels}
    assert names == {"grading_engine", "course_client"}
    problems = [problem for wheel in wheels for problem in denied(wheel)]
    assert not problems, "\n".join(problems)
    [engine] = [w for w in wheels if w.name.startswith("grading_engine-")]
    with zipfile.ZipFile(engine) as archive:
        files = set(archive.namelist())
    # What the runner and the checks need is there: every harness, with its
    # child side and its judge, and the reference model as bytecode only.
    harnesses = {
        p.name for p in (PROJECT_ROOT / "engine/grading_engine/exercises").glob("*.py")
    }
    assert {f"grading_engine/exercises/{h}" for h in harnesses} <= files
    assert "grading_engine/reference/model.pyc" in files
    assert "grading_engine/harness/child.py" in files
    assert not any(f.startswith("grading_engine/sandbox/") for f in files)
    assert engine.name.endswith(f"-cp3{sys.version_info.minor}-none-any.whl")


def test_the_deny_list_refuses_the_engine_a_checkout_installs(tmp_path):
    """`pip install ./engine` (the old install text) ships the answers."""
    source = tmp_path / "engine"
    shutil.copytree(
        PROJECT_ROOT / "engine",
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info"),
    )
    problems = "\n".join(denied(pip_wheel(source, tmp_path / "wheels")))
    assert "grading_engine/quiz_bank/answers.py: the quiz bank" in problems
    assert "grading_engine/reference/model.py: the reference model's source" in (
        problems
    )
    assert "grading_engine/exercises/kv_cache_bytes.py: a reference solution" in (
        problems
    )
    assert "grading_engine/exercises/tie_weights.py: a hidden-case generator" in (
        problems
    )


def test_the_bundles_hold_visible_cases_only(client_dist):
    from grading_engine.exercises.base import harness_slugs, load_harness
    from grading_engine.expected import decode

    manifest = json.loads((client_dist / "manifest.json").read_text())
    assert sorted(manifest["checks"]) == harness_slugs()
    for harness, entry in manifest["checks"].items():
        bundle = decode((client_dist / entry["file"]).read_bytes())
        visible = [c for c in load_harness(harness).make_cases(7) if not c["hidden"]]
        assert bundle.harness == harness
        assert bundle.cases == json.loads(json.dumps(visible)), harness
        assert set(bundle.expected) == {case["name"] for case in visible}


def test_the_learner_edition_runs_what_a_learner_installs(learner_install):
    """The installed engine and client are the wheels', the model has no
    source, and what the learner edition left out is gone."""
    script = (
        "import inspect, json, grading_engine, course\n"
        "import grading_engine.reference.model as model\n"
        "import grading_engine.exercises.tie_weights as tie\n"
        "try:\n"
        "    inspect.getsource(model.GPT.forward)\n"
        "    source = True\n"
        "except (OSError, TypeError):\n"
        "    source = False\n"
        "def importable(name):\n"
        "    try:\n"
        "        __import__(name)\n"
        "    except ImportError:\n"
        "        return False\n"
        "    return True\n"
        "quiz_bank = importable('grading_engine.quiz_bank')\n"
        "counts = importable('grading_engine.reference.counts')\n"
        "print(json.dumps({'engine': grading_engine.__file__, "
        "'client': course.__file__, 'source': source, 'quiz_bank': quiz_bank, "
        "'counts': counts, 'make_cases': hasattr(tie, 'make_cases')}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd="/",
        env={"PYTHONPATH": str(learner_install), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(out.stdout)
    assert found["engine"].startswith(str(learner_install)), found
    assert found["client"].startswith(str(learner_install)), found
    left_out = {"source": False, "quiz_bank": False, "counts": False}
    assert found == {**found, **left_out, "make_cases": False}


def test_an_expectation_reads_the_bundle_and_never_computes(client_dist):
    """In the full engine too: with a bundle active, an expectation returns
    the shipped value and does not run its body."""
    from grading_engine.exercises.base import load_harness
    from grading_engine.expected import decode, shipped

    module = load_harness("kv-cache-bytes")
    entry = json.loads((client_dist / "manifest.json").read_text())["checks"]
    bundle = decode((client_dist / entry["kv-cache-bytes"]["file"]).read_bytes())
    case = bundle.cases[0]
    body = inspect.unwrap(module.expected)
    with shipped(bundle):
        value = module.expected(case)
        assert value == body(case)
        with pytest.raises(LookupError, match="shipped no"):
            module.expected({**case, "name": "a hidden one"})
