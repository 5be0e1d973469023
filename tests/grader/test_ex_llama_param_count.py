"""llama-param-count: the published count, a config whose attention width is
not hidden_size in every draw, and every slip named."""

from __future__ import annotations

import pytest
from grading_engine.exercises import llama_param_count as ex

from tests.grader.inprocess import standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)


def _int(value: int) -> dict:
    return {"result": {"type": "builtins.int", "value": value, "repr": repr(value)}}


def test_reference_matches_the_prompt():
    assert ex.reference(ex.config_of(ex.PUBLISHED["Llama 3.2 1B"])) == 1_235_814_400


@pytest.mark.parametrize("seed", range(200))
def test_every_draw_has_an_attention_width_other_than_hidden_size(seed):
    hidden = [c["config"] for c in ex.make_cases(seed) if c["hidden"]]
    assert any(
        c["num_attention_heads"] * c["head_dim"] != c["hidden_size"] for c in hidden
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        right = ex.reference(case["config"])
        slips = ex._slips(case["config"])
        for wrong, slip, hint in slips:
            if wrong == right:
                continue  # head_dim derived right when heads * head_dim = hidden
            [result] = ex.check_case(case, _int(wrong), {})
            assert not result.passed
            if sum(w == wrong for w, _, _ in slips) == 1:
                assert result.diagnosis == slip, (case["name"], slip)
                assert hint in result.message
