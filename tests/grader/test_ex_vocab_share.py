"""vocab-share: the lesson's shares, and every slip named in every draw."""

from __future__ import annotations

import math

import pytest
from grading_engine.exercises import vocab_share as ex

from tests.grader.inprocess import standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)


def _data(value: float) -> dict:
    return {"type": "builtins.float", "value": value, "repr": repr(value)}


def test_reference_matches_the_lesson():
    shares = {name: ex.reference(*cfg) for name, cfg in ex.MODELS.items()}
    assert {name: f"{s:.1%}" for name, s in shares.items()} == {
        "Llama 3.2 1B": "21.3%",
        "Llama 3.1 8B": "6.5%",
        "Llama 3.2 3B": "12.3%",
        "Llama 3.1 70B": "1.5%",
    }
    # and the totals behind them: Llama 3.1 8B has 8,030,261,248 parameters
    v, d = 128256, 4096
    assert round(v * d / shares["Llama 3.1 8B"]) == 8_030_261_248


@pytest.mark.parametrize("seed", SEEDS)
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        right = ex.reference(**case["args"])
        for wrong, slip, hint in ex._slips(case["args"]):
            if wrong == right:  # ignored-tying's row for this model's own flag
                continue
            [result] = ex.check_case(case, _data(wrong), {})
            assert not result.passed
            assert result.diagnosis == slip, (case["name"], slip)
            assert hint in result.message


@pytest.mark.parametrize("seed", range(20))
def test_every_draw_has_gqa_and_both_kinds_of_head(seed):
    hidden = [c["args"] for c in ex.make_cases(seed) if c["hidden"]]
    assert all(a["n_kv"] < a["n_q"] for a in hidden)
    assert {a["tied"] for a in hidden} == {True, False}


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = ex.make_cases(1), ex.make_cases(2)
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_a_near_miss_fails_undiagnosed():
    case = ex.make_cases(0)[0]
    [near] = ex.check_case(case, _data(ex.reference(**case["args"]) * 1.01), {})
    assert not near.passed and near.diagnosis is None
    assert math.isclose(ex.reference(**case["args"]), 0.2125, abs_tol=5e-5)
