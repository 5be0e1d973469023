"""chinchilla-tokens: the lesson's numbers, and every slip named in every draw."""

from __future__ import annotations

import math

import pytest
from grading_engine.exercises import chinchilla_tokens as ex
from grading_engine.reference import get_config, gpt2_parameter_count

from tests.grader.inprocess import standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)


def _data(value: float) -> dict:
    return {"type": "builtins.float", "value": value, "repr": repr(value)}


def test_reference_matches_the_lesson():
    assert f"{ex.reference(5.76e23, 20):.3g}" == "1.39e+12"  # Gopher's budget
    assert f"{ex.reference(1.2e21, 20):.3g}" == "6.32e+10"
    c = get_config("gpt2-medium")
    n = gpt2_parameter_count(c.vocab_size, c.block_size, c.n_embd, c.n_layer)
    assert n == ex.GPT2_MEDIUM
    assert round(ex.reference(6 * n * 20 * n, 20)) == 20 * n == 7_096_463_360
    # Chinchilla itself: 70B parameters on 1.4T tokens
    assert math.isclose(ex.reference(6 * 70e9 * 1.4e12, 20), 1.4e12, rel_tol=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        for wrong, slip, hint in ex._slips(case["args"]):
            [result] = ex.check_case(case, _data(wrong), {})
            assert not result.passed
            assert result.diagnosis == slip, (case["name"], slip)
            assert hint in result.message


@pytest.mark.parametrize("seed", range(20))
def test_every_draw_asks_for_a_ratio_other_than_20(seed):
    hidden = [c for c in ex.make_cases(seed) if c["hidden"]]
    assert any(c["args"]["tokens_per_param"] != 20 for c in hidden)


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = ex.make_cases(1), ex.make_cases(2)
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_a_near_miss_fails_undiagnosed_and_an_int_is_a_number():
    case = ex.make_cases(3)[0]
    right = ex.reference(**case["args"])
    [near] = ex.check_case(case, _data(right * 1.01), {})
    assert not near.passed and near.diagnosis is None
    data, _ = ex.run_case(lambda c, r: round(ex.reference(c, r)), case)
    assert ex.check_case(case, data, {})[0].passed
