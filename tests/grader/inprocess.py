"""Grade an exercise in this process, the way the sandbox would.

The real grader runs make_cases and check_case in the parent and run_case in
a sandboxed child; the two talk through JSON (cases, plain results) and
safetensors (tensors). Grading in-process is fast enough to try every seed
and every wrong solution, and the wire round trip keeps it honest: an answer
that only passes because a tensor kept its stride, a view or a Python type
the real split would lose fails here too.

A test module uses it with:

    from tests.grader.inprocess import one_thread  # noqa: F401 (autouse)

    SPEC = load_spec(SLUG)
    grade = partial(grade_in_process, SLUG)
    test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
        SLUG, SEEDS
    )
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import torch
import yaml
from grading_engine.exercises.base import load_harness
from grading_engine.grading import judge_cases
from grading_engine.harness.inputs import run_watched
from grading_engine.reference.tokenizer import get_encoding
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save

EXERCISES = Path(__file__).resolve().parents[2] / "content" / "exercises"


@functools.cache
def load_spec(slug: str) -> dict:
    """The exercise's YAML (solution, wrong_solutions, entry_point), parsed once."""
    return yaml.safe_load((EXERCISES / f"{slug}.yaml").read_text(encoding="utf-8"))


def _over_the_wire(data: dict, tensors: dict) -> tuple[dict, dict]:
    """What the parent receives: JSON data and safetensors-serialised tensors."""
    data = json.loads(json.dumps(data))
    plain = {k: t.contiguous().clone() for k, t in tensors.items()}
    return data, (st_load(st_save(plain)) if plain else {})


def grade_fn_in_process(slug: str, fn: Callable, seed: int, *, wire: bool = True):
    """Every check result for `fn` on the seed's cases.

    wire=False hands run_case's output straight to check_case, for tests that
    poke at the checks with answers the wire format would not carry.
    """
    module = load_harness(slug)
    return judge_cases(
        module, [_run(module, fn, case, wire) for case in module.make_cases(seed)]
    )


def grade_case_in_process(module, fn: Callable, case: dict, *, wire: bool = True):
    """The check results for `fn` on one case of an exercise module.

    For tests that grade only the cases they need (e.g. one draw's hidden
    cases, stopping at the first failure) instead of a whole seed.
    """
    return judge_cases(module, [_run(module, fn, case, wire)])  # as judge does


def _run(module, fn: Callable, case: dict, wire: bool) -> tuple[dict, dict, dict]:
    """(case, data, tensors) as the parent gets them from the child."""
    if wire:
        case = json.loads(json.dumps(case))
    data, tensors = run_watched(module, fn, case)  # as the child does
    if wire:
        data, tensors = _over_the_wire(data, tensors)
    return case, data, tensors


def submitted_function(slug: str, code: str, entry_point: str | None = None):
    """Exec submitted source as a module would be and return its entry point.

    The child finds GPT-2's BPE files offline (TIKTOKEN_CACHE_DIR); so must
    this process, whichever test ran first, or tiktoken tries to download.
    """
    get_encoding()
    namespace = {"__name__": "__submission__"}
    exec(compile(code, "<submission>", "exec"), namespace)  # noqa: S102
    return namespace[entry_point or load_spec(slug)["entry_point"]]


def grade_in_process(
    slug: str, code: str, seed: int, *, entry_point: str | None = None
) -> list:
    """Exec submitted source as a module would be and grade its entry point."""
    return grade_fn_in_process(slug, submitted_function(slug, code, entry_point), seed)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread, as the sandboxed child runs (OMP_NUM_THREADS=1).

    Import it into a test module to activate it there (it is autouse).
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def standard_tests(slug: str, seeds: Sequence[int]) -> tuple[Callable, Callable]:
    """The two tests every exercise owes: its solution passes on each seed
    (with hidden and visible cases), and each listed wrong solution fails
    with its own diagnosis. Bind both to `test_*` names in the test module.
    """
    spec = load_spec(slug)

    @pytest.mark.parametrize("seed", seeds)
    def test_the_solution_passes(seed):
        results = grade_in_process(slug, spec["solution"], seed)
        assert results and all(r.passed for r in results), [
            r.message for r in results if not r.passed
        ]
        assert any(r.hidden for r in results) and any(not r.hidden for r in results)

    @pytest.mark.parametrize("seed", seeds)
    @pytest.mark.parametrize(
        "wrong", spec["wrong_solutions"], ids=lambda w: w["name"].replace(" ", "-")
    )
    def test_each_wrong_solution_is_named(wrong, seed):
        failed = [
            r for r in grade_in_process(slug, wrong["code"], seed) if not r.passed
        ]
        assert failed
        assert wrong["diagnosis"] in {r.diagnosis for r in failed}, [
            r.message for r in failed
        ]

    return test_the_solution_passes, test_each_wrong_solution_is_named
