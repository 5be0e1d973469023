"""Submissions written by others: every verdict right, no right answer named.

tests/grader/heldout/ holds 240 submissions, 3 wrong and 1 right for each of
the 60 exercises, written (session 19, issue 47) by writers who read only
each exercise's prompt, signature, starter, reference solution and lesson:
never its known wrong solutions, its harness, the grader's checks or
content/diagnoses.yaml, and who did not run the grader on them; they ran
each on inputs of their own to make sure a wrong one differs from the
reference and a right one does not. They stay out of every slip's tests, so
they measure how the grader names mistakes it was not built around:
`benchmarks/sandbox_bench.py` prints the share named (the README's "held-out
wrong answers named", against a target of 90%), and so does
`scripts/unnamed_mistakes.py --held-out`, which shows no held-out answer:
slips are built from tests/grader/devset/ only. Here: each wrong one
fails and each right one passes (so no right one is given a mistake's name:
a name comes only with a failed check).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.authored_spec import declaration_of
from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse)
)

HELDOUT = Path(__file__).resolve().parent / "heldout"
SUBMISSIONS = [
    item
    for path in sorted(HELDOUT.glob("*.yaml"))
    for item in yaml.safe_load(path.read_text(encoding="utf-8"))["submissions"]
]
SEED = 1


def test_the_held_out_set_covers_every_exercise_both_ways():
    exercises = Path(__file__).resolve().parents[2] / "content" / "exercises"
    # Built-in harnesses: an authored exercise's checks are its declaration,
    # graded in the sandbox only (its reference runs there), not in process.
    slugs = {
        path.stem
        for path in exercises.glob("*.yaml")
        if declaration_of(load_spec(path.stem)) is None
    }
    assert {(s["slug"], s["kind"]) for s in SUBMISSIONS} == {
        (slug, kind) for slug in slugs for kind in ("wrong", "right")
    }


@pytest.mark.parametrize("slug", sorted({s["slug"] for s in SUBMISSIONS}))
def test_every_held_out_verdict_is_right(slug):
    wrong_verdicts = []
    for item in (s for s in SUBMISSIONS if s["slug"] == slug):
        failed = [r for r in grade_in_process(slug, item["code"], SEED) if not r.passed]
        if bool(failed) != (item["kind"] == "wrong"):
            shown = [(r.message, r.diagnosis) for r in failed]
            wrong_verdicts.append((item["kind"], item["mistake"], shown))
    assert not wrong_verdicts, wrong_verdicts
