"""kv-crossover-tokens: every draw has the crossover exactly at a whole token,
one parameter below and one above, and every slip is named."""

from __future__ import annotations

import pytest
from grading_engine.exercises import kv_crossover_tokens as ex

from tests.grader.inprocess import standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)


def _int(value: int) -> dict:
    return {"result": {"type": "builtins.int", "value": value, "repr": repr(value)}}


def _per_token(a: dict) -> int:
    return (
        a["batch_size"] * 2 * a["n_layer"] * a["n_kv_heads"] * a["head_dim"]
        * a["cache_bytes"]
    )  # fmt: skip


def test_reference_matches_the_prompt():
    gpt2 = ex.make_cases(0)[0]["args"]
    assert ex.reference(**gpt2) == 6_752


@pytest.mark.parametrize("seed", range(200))
def test_every_draw_has_the_boundary_and_both_sides(seed):
    hidden = [c["args"] for c in ex.make_cases(seed) if c["hidden"]]
    exact = [
        a for a in hidden if a["n_params"] * a["weight_bytes"] % _per_token(a) == 0
    ]
    assert exact, "no case where the caches equal the weights at a whole token"
    for a in exact:
        tokens = ex.reference(**a)
        assert tokens * _per_token(a) == a["n_params"] * a["weight_bytes"]
        below = {**a, "n_params": a["n_params"] - 1}
        above = {**a, "n_params": a["n_params"] + 1}
        assert below in hidden and above in hidden
        assert ex.reference(**below) == tokens  # still rounds up to it
        assert ex.reference(**above) == tokens + 1


@pytest.mark.parametrize("seed", [0, 1, 20_240_611])
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        right = ex.reference(**case["args"])
        for wrong, slip, hint in ex._slips(case["args"]):
            if wrong == right:
                continue  # e.g. rounding down where the weights divide exactly
            [result] = ex.check_case(case, _int(wrong), {})
            assert not result.passed
            if sum(w == wrong for w, _, _ in ex._slips(case["args"])) == 1:
                assert result.diagnosis == slip, (case["name"], slip)
                assert hint in result.message


def test_the_strict_slip_only_exists_at_the_boundary():
    cases = [c for c in ex.make_cases(5) if c["hidden"]]
    for case in cases:
        a = case["args"]
        named = {slip for _, slip, _ in ex._slips(a)}
        at = a["n_params"] * a["weight_bytes"] % _per_token(a) == 0
        assert ("crossover-strict" in named) == at
