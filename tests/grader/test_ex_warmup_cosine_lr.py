"""warmup-cosine-lr: the lesson's schedule, every slip named at the steps it shows."""

from __future__ import annotations

import math

import pytest
from grading_engine.exercises import warmup_cosine_lr as ex

from tests.grader.inprocess import grade_fn_in_process, standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)
NANOGPT = {"peak": 6e-4, "min_lr": 6e-5, "warmup": 2000, "decay": 600000}


def test_reference_matches_the_lesson():
    got = [f"{ex.reference(t, **NANOGPT):.2e}" for t in (0, 999, 1999, 2000)]
    assert got == ["3.00e-07", "3.00e-04", "6.00e-04", "6.00e-04"]
    got = [f"{ex.reference(t, **NANOGPT):.2e}" for t in (301000, 600000, 700000)]
    assert got == ["3.30e-04", "6.00e-05", "6.00e-05"]
    total = sum(ex.reference(t, **NANOGPT) for t in range(0, 600000, 10))
    assert round(total / 60000 / 6e-4, 2) == 0.55


@pytest.mark.parametrize("seed", range(20))
def test_every_case_asks_for_every_boundary(seed):
    for case in ex.make_cases(seed):
        warmup, decay = case["args"]["warmup"], case["args"]["decay"]
        steps = case["steps"]
        assert {0, warmup - 1, warmup, decay} <= set(steps)
        assert any(warmup < s < decay for s in steps)
        assert any(s > decay for s in steps)
        assert 0 < case["args"]["min_lr"] < case["args"]["peak"]


@pytest.mark.parametrize("seed", SEEDS)
def test_each_slip_is_named_in_the_hidden_cases_too(seed):
    for case in ex.make_cases(seed):
        if not case["hidden"]:
            continue
        for it in case["steps"]:
            right = ex.reference(it, **case["args"])
            for wrong, slip, hint in ex._slips(it, **case["args"]):
                if math.isclose(wrong, right, rel_tol=ex.REL_TOL):  # same here
                    continue
                data = {"rates": [{"type": "builtins.float", "value": wrong}]}
                [result] = ex.check_case({**case, "steps": [it]}, data, {})
                assert not result.passed and result.diagnosis == slip
                assert hint in result.message


def test_a_missing_return_is_named_at_every_step():
    results = grade_fn_in_process(ex.SLUG, lambda *args: None, 0)
    assert results and all(r.diagnosis == "not-a-float" for r in results)


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = ex.make_cases(1), ex.make_cases(2)
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_every_draw_asks_just_before_at_and_just_after_each_limit():
    from grading_engine.exercises.base import load_harness

    module = load_harness("warmup-cosine-lr")
    for seed in range(50):
        for case in module.make_cases(seed):
            if not case["hidden"]:
                continue
            w, d = case["args"]["warmup"], case["args"]["decay"]
            assert {w - 1, w, d - 1, d, d + 1} <= set(case["steps"]), seed
