"""loss-scale: the lesson's scaler run, and every slip named in every draw."""

from __future__ import annotations

import pytest
import torch
from grading_engine.exercises import loss_scale as ex

from tests.grader.inprocess import standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)


def _data(value: float) -> dict:
    return {"type": "builtins.float", "value": value, "repr": repr(value)}


def test_reference_matches_the_lesson():
    assert ex.reference([0.5, 3.0, 3.0, 0.2, 0.2, 0.2, 0.2], 2.0**16, 3) == 32768.0
    # 65,504 is fp16's largest finite value: it fits, one more ulp does not
    assert torch.finfo(torch.float16).max == ex.FP16_MAX
    assert torch.isfinite(torch.tensor(ex.FP16_MAX).to(torch.float16))
    assert ex.reference([ex.FP16_MAX / 2**16], 2.0**16, 5) == 2.0**16


@pytest.mark.parametrize("seed", range(25))
def test_every_hidden_run_separates_every_slip(seed):
    """Final scales are powers of two, so the two hidden runs share the slips
    out: each slip ends at a scale of its own in one of them, named there."""
    named = set()
    for case in ex.make_cases(seed):
        if not case["hidden"]:
            continue
        right = ex.reference(**case["args"])
        ends = [wrong for wrong, _, _ in ex._slips(case["args"])]
        for wrong, slip, hint in ex._slips(case["args"]):
            if wrong == right or ends.count(wrong) > 1:
                continue
            [result] = ex.check_case(case, _data(wrong), {})
            assert not result.passed and result.diagnosis == slip
            assert hint in result.message
            named.add(slip)
    assert named == set(ex.HINTS)


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = ex.make_cases(1), ex.make_cases(2)
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_an_int_scale_is_accepted_and_a_tensor_is_named():
    case = ex.make_cases(0)[0]
    data, _ = ex.run_case(lambda g, s, i: int(ex.reference(g, s, i)), case)
    assert ex.check_case(case, data, {})[0].passed
    data, _ = ex.run_case(lambda g, s, i: torch.tensor([1.0, 2.0]), case)
    assert ex.check_case(case, data, {})[0].diagnosis == "not-a-float"


def test_every_draw_lands_at_just_below_and_just_above_65504():
    from grading_engine.exercises.base import load_harness

    module = load_harness("loss-scale")
    for seed in range(30):
        scaled = []
        for case in module.make_cases(seed):
            if not case["hidden"]:
                continue
            args = case["args"]
            grads, init = args["grad_maxes"], args["init_scale"]
            interval = args["growth_interval"]
            scaled += [
                g * module.simulate(grads[:i], init, interval)
                for i, g in enumerate(grads)
            ]
        assert module.FP16_MAX in scaled, seed
        assert any(module.FP16_MAX - 30 <= x < module.FP16_MAX for x in scaled), seed
        assert any(module.FP16_MAX < x <= module.FP16_MAX + 30 for x in scaled), seed
