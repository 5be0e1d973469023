"""train-hours: the reference matches the lesson, and every slip is named."""

from __future__ import annotations

import math

import pytest
from grading_engine.exercises import train_hours as ex


def _data(value: float) -> dict:
    return {"type": "builtins.float", "value": value, "repr": repr(value)}


def test_reference_matches_the_lesson():
    n = 124_439_808
    assert round(ex.reference(n, 10e9, 312e12, 0.40, 1), 2) == 16.62
    assert round(ex.reference(n, 10e9, 989e12, 0.40, 8), 2) == 0.66


@pytest.mark.parametrize("seed", [0, 1, 20_240_611])
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        slips = ex._slips(case["args"])
        assert len(slips) == (8 if case["args"]["n_gpus"] > 1 else 7)
        for wrong, slip, hint in slips:
            [result] = ex.check_case(case, _data(wrong), {})
            assert not result.passed
            assert result.diagnosis == slip, (case["name"], slip)
            assert hint in result.message


def test_the_right_answer_passes_and_a_near_miss_fails_undiagnosed():
    case = ex.make_cases(3)[0]
    right = ex.reference(**case["args"])
    assert ex.check_case(case, _data(right), {})[0].passed
    [near] = ex.check_case(case, _data(right * 1.01), {})
    assert not near.passed and near.diagnosis is None


@pytest.mark.parametrize(
    "data",
    [
        {"type": "numpy.int64", "value": None, "repr": "16"},
        {"type": "builtins.str", "value": None, "repr": "'16.6'"},
        {"type": "builtins.float", "value": math.nan, "repr": "nan"},
        {"type": "builtins.float", "value": "16.6", "repr": "'16.6'"},
    ],
)
def test_it_names_a_non_float(data):
    [result] = ex.check_case(ex.make_cases(0)[0], data, {})
    assert not result.passed and result.diagnosis == "not-a-float"


def test_the_child_side_records_types_not_trust():
    case = ex.make_cases(0)[0]
    data, _ = ex.run_case(lambda *args: True, case)
    assert data["value"] is None and data["type"] == "builtins.bool"
    data, _ = ex.run_case(lambda *args: ex.reference(*args), case)
    assert data["value"] == ex.reference(**case["args"])
