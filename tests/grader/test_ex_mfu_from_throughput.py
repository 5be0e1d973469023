"""mfu-from-throughput: consistent with train-hours, and every slip is named."""

from __future__ import annotations

import math

import pytest
from grading_engine.exercises import mfu_from_throughput as ex
from grading_engine.exercises import train_hours


def _data(value: float) -> dict:
    return {"type": "builtins.float", "value": value, "repr": repr(value)}


def test_reference_matches_the_lesson():
    assert round(ex.reference(491_520 / 0.6, 124_439_808, 312e12, 8), 3) == 0.245


@pytest.mark.parametrize("seed", [0, 5, 20_240_611])
def test_it_inverts_train_hours(seed):
    """Training D tokens at the measured MFU takes D / tokens_per_s seconds."""
    for case in ex.make_cases(seed):
        a = case["args"]
        mfu = ex.reference(**a)
        tokens = 1e10
        hours = train_hours.reference(
            a["n_params"], tokens, a["peak_flops"], mfu, a["n_gpus"]
        )
        assert math.isclose(hours, tokens / a["tokens_per_s"] / 3600, rel_tol=1e-9)


@pytest.mark.parametrize("seed", [0, 5, 20_240_611])
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        for wrong, slip, hint in ex._slips(case["args"]):
            [result] = ex.check_case(case, _data(wrong), {})
            assert not result.passed
            assert result.diagnosis == slip, (case["name"], slip)
            assert hint in result.message


def test_the_right_answer_passes_and_a_tensor_is_named():
    case = ex.make_cases(1)[1]
    assert ex.check_case(case, _data(ex.reference(**case["args"])), {})[0].passed
    data = {"type": "torch.Tensor", "value": None, "repr": "tensor(0.2450)"}
    [result] = ex.check_case(case, data, {})
    assert result.diagnosis == "not-a-float" and ".item()" in result.message
