"""A warm pool shared by the attack suite, and helpers to grade through it.

The suite needs bubblewrap; without it every test is skipped with that
reason. Anything else missing (not root, no user namespaces) is a failure:
the sandbox refusing to start is exactly what such a machine must see.
"""

from __future__ import annotations

import os
import shutil
import textwrap

import pytest
from grading_engine.grading import Verdict, grade

CANARY = "canary-7f3e91c4-never-inside"
RIGHT = """\
def tie_weights(model):
    model.lm_head.weight = model.transformer.wte.weight
"""


def needs_bwrap():
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: the sandbox cannot run")


@pytest.fixture(scope="session")
def pool():
    needs_bwrap()
    from grading_engine.sandbox import WarmPool

    # A secret in the parent's environment that must never reach a job.
    os.environ["GRADER_TEST_SECRET"] = CANARY
    try:
        with WarmPool(2) as warm:
            yield warm
    finally:
        os.environ.pop("GRADER_TEST_SECRET", None)


def run_attack(
    runner, code: str, *, timeout: float = 10.0, cancel=None, slow=None
) -> Verdict:
    """Grade tie-weights with `code` as the submission."""
    return grade(
        harness="tie-weights",
        code=textwrap.dedent(code),
        entry_point="tie_weights",
        runner=runner,
        timeout=timeout,
        cancel=cancel,
        slow=slow,
    )


def messages(verdict: Verdict) -> str:
    return "\n".join(check.message for check in verdict.checks)


def assert_grader_still_works(runner, grades: int = 2) -> None:
    """The right answer passes on the next grades (both slots of the pool)."""
    for _ in range(grades):
        verdict = run_attack(runner, RIGHT)
        assert verdict.status == "passed", messages(verdict)


@pytest.fixture(scope="session")
def cold_runner():
    """One cold sandbox at a time, for the attacks that apply to both modes."""
    needs_bwrap()
    from grading_engine.sandbox import SandboxRunner

    runner = SandboxRunner(concurrency=1)
    yield runner
    runner.close()
