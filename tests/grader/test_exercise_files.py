"""Every content/exercises/*.yaml is complete, and grading proves it right.

The reference solution must pass through the production runner (the warm
sandbox pool learners are graded by) and each wrong solution must not,
naming the diagnosis it declares; each right solution (another idiom) must
pass. Each grade is held to the budget its exercise gets in production,
measured here as a worker measures it (10x the reference's CPU time, at
least 1.5 s), or the one its options set. In make test, the references and
wrong solutions are graded once, by tests/client/test_parity.py, which
holds the server's grades to the same (production_problems); their tests
here are the exhaustive tier.

Load cannot change these verdicts, and this module proves it without
loading the machine: a budget is CPU time, which a busy machine does not
inflate (test_budgets measures the same grades idle and under a CPU hog
per core, and tests/sandbox stops a loop at its CPU budget under hogs),
and every grade that finishes here uses at most half its budget, so CPU
time would have to double under load before a verdict could change. The
brute-force proof, every grade repeated with a hog on every core, is
test_exercise_files_under_load.py (make test-exhaustive). Without
bubblewrap grades fall back to a plain child process, which counts wall
time: then the generous TIMEOUT. One xdist group, so one pool.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest
import yaml
from grading_engine.authored import HARNESS as AUTHORED
from grading_engine.exercises.base import load_harness
from grading_engine.grading import grade
from grading_engine.harness.subprocess_runner import SubprocessRunner

from tests.authored_spec import declaration_of

EXERCISES = Path(__file__).resolve().parents[2] / "content" / "exercises"
FILES = sorted(EXERCISES.glob("*.yaml"))
REQUIRED = {
    "slug",
    "title",
    "harness",
    "entry_point",
    "signature",
    "prompt",
    "starter",
    "solution",
    "wrong_solutions",
}
KNOWN = REQUIRED | {"lesson", "options", "right_solutions", "declaration"}
SEED = 20_240_611  # fixed, so a failure here can be replayed
TIMEOUT = 180.0  # a cold child may build GPT-2 small on a busy machine
SANDBOX = shutil.which("bwrap") is not None
# A finished grade uses at most 1/HEADROOM of its budget in CPU time.
HEADROOM = 2.0
pytestmark = pytest.mark.xdist_group("exercise-files")
_budgets: dict[str, float] = {}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def solution_params(key: str):
    params = []
    for path in FILES:
        for index, known in enumerate(load(path).get(key) or []):
            label = f"{path.stem}-{index}-{known.get('name', '?')}".replace(" ", "-")
            params.append(pytest.param(path, index, id=label))
    return params


@pytest.fixture(scope="module")
def runner():
    if not SANDBOX:
        yield SubprocessRunner()
        return
    from grading_engine.sandbox import WarmPool

    with WarmPool(1) as pool:
        yield pool


def budget(runner, exercise: dict) -> float:
    """The exercise's production budget, measured as a worker does: the
    reference's CPU time in the pool, on this busy machine."""
    if not SANDBOX:
        return TIMEOUT
    slug = exercise["slug"]
    if slug not in _budgets:
        verdict = None
        if set_budget(exercise) is None:
            verdict = run(runner, exercise, exercise["solution"], TIMEOUT)
            assert verdict.status == "passed" and verdict.cpu_ms is not None, slug
        _budgets[slug] = production_budget(exercise, verdict)
    return _budgets[slug]


def set_budget(exercise: dict) -> float | None:
    """The budget the exercise's options set, which production uses instead
    of measuring one."""
    from grader.budgets import BUDGET_OPTION

    chosen = (exercise.get("options") or {}).get(BUDGET_OPTION)
    return None if chosen is None else float(chosen)


def production_budget(exercise: dict, reference) -> float:
    """What a worker gives the exercise: the budget its options set, else
    one measured from the reference's verdict (CPU time in the pool)."""
    from grader.budgets import budget_from_reference

    chosen = set_budget(exercise)
    return chosen if chosen is not None else budget_from_reference(reference.cpu_ms)


def over_headroom(verdict, budget: float) -> str | None:
    """Why a grade that finished is too close to its budget for load not to
    change its verdict (more than 1/HEADROOM of it in CPU time), or None."""
    if verdict.cpu_ms is None or stopped_at_the_limit(verdict):
        return None
    if verdict.cpu_ms / 1000 * HEADROOM <= budget:
        return None
    return (
        f"used {verdict.cpu_ms:.0f} ms of CPU time, more than 1/{HEADROOM:g} of "
        f"its {budget:.2f} s budget: a busy machine could change this verdict"
    )


def run(runner, exercise: dict, code: str, timeout: float):
    verdict = grade(
        declaration=declaration_of(exercise),
        harness=exercise["harness"],
        code=code,
        entry_point=exercise["entry_point"],
        runner=runner,
        seed=SEED,
        timeout=timeout,
    )
    if SANDBOX:
        problem = over_headroom(verdict, timeout)
        assert problem is None, f"{exercise['slug']}: {problem}"
    return verdict


def stopped_at_the_limit(verdict) -> bool:
    """A grade the time limit ended (a known wrong solution may be one): load
    only moves when it is stopped, not whether."""
    return any(c.name == "time limit" for c in verdict.checks)


def _function(code: str, name: str) -> ast.FunctionDef | None:
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def test_there_are_exercise_files():
    assert len(FILES) >= 6


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_exercise_file_is_valid_and_complete(path):
    exercise = load(path)
    assert isinstance(exercise, dict)
    assert REQUIRED <= set(exercise), f"missing {REQUIRED - set(exercise)}"
    assert set(exercise) <= KNOWN, f"unknown keys {set(exercise) - KNOWN}"
    assert exercise["slug"] == path.stem
    for key in REQUIRED - {"wrong_solutions"}:
        assert isinstance(exercise[key], str) and exercise[key].strip(), key

    module = load_harness(exercise["harness"])
    if exercise["harness"] == AUTHORED:  # its checks are its declaration
        assert declaration_of(exercise).entry_point == exercise["entry_point"]
    else:
        assert module.SLUG == exercise["slug"]
        assert module.ENTRY_POINT == exercise["entry_point"]
        assert module.SIGNATURE == exercise["signature"]
        assert "declaration" not in exercise

    starter = _function(exercise["starter"], exercise["entry_point"])
    assert starter is not None, "the starter defines the entry point"
    assert ast.get_docstring(starter), "the starter has a docstring"
    assert _function(exercise["solution"], exercise["entry_point"]) is not None

    wrongs = exercise["wrong_solutions"]
    assert isinstance(wrongs, list) and len(wrongs) >= 2
    for wrong in wrongs:
        assert {"name", "diagnosis", "code"} <= set(wrong)
        assert wrong["diagnosis"] is None or isinstance(wrong["diagnosis"], str)
        compile(wrong["code"], wrong["name"], "exec")

    rights = exercise.get("right_solutions", [])
    assert isinstance(rights, list)
    for right in rights:
        assert {"name", "code"} <= set(right) and "diagnosis" not in right
        compile(right["code"], right["name"], "exec")
    names = [known["name"] for known in [*wrongs, *rights]]
    assert len(names) == len(set(names)), "each known solution has its own name"


# The reference and every wrong solution are graded in make test by
# tests/client/test_parity.py, in the production pool through exercise_grade,
# and held there to all that these two tests check (production_problems);
# they are the brute-force tier here and in test_exercise_files_under_load.
@pytest.mark.slow
@pytest.mark.exhaustive
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_reference_solution_passes(runner, path):
    exercise = load(path)
    verdict = run(runner, exercise, exercise["solution"], budget(runner, exercise))
    failed = [c.message for c in verdict.checks if not c.passed]
    assert verdict.status == "passed", failed
    assert verdict.score == 1.0


@pytest.mark.slow
@pytest.mark.exhaustive
@pytest.mark.parametrize(("path", "index"), solution_params("wrong_solutions"))
def test_wrong_solution_fails_with_its_diagnosis(runner, path, index):
    exercise = load(path)
    wrong = exercise["wrong_solutions"][index]
    verdict = run(runner, exercise, wrong["code"], budget(runner, exercise))
    assert verdict.status != "passed"
    if wrong["diagnosis"] is not None:
        named = {c.diagnosis for c in verdict.checks if not c.passed}
        assert wrong["diagnosis"] in named, [c.message for c in verdict.checks]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "index"), solution_params("right_solutions"))
def test_right_solution_passes(runner, path, index):
    """A right answer in another idiom (einsum, loops, a namedtuple, prints)
    passes: the grader judges what the prompt asks, not the reference's form."""
    exercise = load(path)
    right = exercise["right_solutions"][index]
    verdict = run(runner, exercise, right["code"], budget(runner, exercise))
    failed = [(c.message, c.diagnosis) for c in verdict.checks if not c.passed]
    assert verdict.status == "passed", failed
    assert verdict.score == 1.0


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    [path for path in FILES if load(path)["harness"] == AUTHORED],
    ids=lambda p: p.stem,
)
def test_an_authored_reference_answers_every_hidden_draw(runner, path):
    """As verifying an admin's save does (grader.versions): the hidden cases
    of 25 draws in one job, each answered by the reference."""
    from grading_engine.authored import failed_draws

    from grader.authored import author_runs

    run = author_runs(runner, timeout=TIMEOUT)
    assert failed_draws(declaration_of(load(path)), run) == []
