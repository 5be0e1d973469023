"""Two slips that give one number on a case are told apart by another case.

grading.judge_cases rules out, before naming, every slip a value judge lists
that some case contradicts, named or not: on a case where two slips tie,
neither is named by that case alone (values.slip_diagnosis), but the case
where they differ says which one the learner made.
"""

from __future__ import annotations

import types

from grading_engine.checks.judges import int_check
from grading_engine.grading import judge_cases
from grading_engine.harness.capture import capture_int


def _slips(n: int) -> list:
    """ "doubled" and "plus-two" give the same number at n = 2, and only there."""
    return [
        (2 * n + n, "tripled", "tripled"),
        (n + 2, "plus-two", "added two"),
        (2 * n, "doubled", "doubled"),
    ]


def _expected(case: dict) -> dict:
    n = case["args"][0]
    return {"value": n, "slips": _slips(n)}


EXERCISE = types.SimpleNamespace(
    __name__="tie_exercise", check_case=int_check("value", _expected)
)


def _runs(answer, sizes) -> list:
    return [
        (
            {"name": f"n={n}", "hidden": False, "args": [n]},
            {"result": capture_int(answer(n))},
            {},
        )
        for n in sizes
    ]


def _names(checks) -> set:
    return {c.diagnosis for c in checks if not c.passed}


def test_a_tie_on_one_case_is_broken_by_another():
    # At n = 2, "doubled" (4) and "plus-two" (4) tie; at n = 5 only "doubled".
    checks = judge_cases(EXERCISE, _runs(lambda n: 2 * n, [2, 5]))
    assert _names(checks) == {"doubled"}


def test_alone_the_tied_case_names_nothing():
    checks = judge_cases(EXERCISE, _runs(lambda n: 2 * n, [2]))
    assert _names(checks) == {None}


def test_a_right_answer_is_judged_once_and_named_nothing():
    checks = judge_cases(EXERCISE, _runs(lambda n: n, [2, 5]))
    assert all(c.passed for c in checks)
