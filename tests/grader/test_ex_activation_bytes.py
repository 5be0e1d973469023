"""activation-bytes: the lesson's saved-tensor count, and every slip named."""

from __future__ import annotations

import pytest
import torch
from grading_engine.exercises import activation_bytes as ex
from grading_engine.reference import GPT, get_config

from tests.grader.inprocess import standard_tests

SEEDS = (0, 1, 20_240_611)
test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    ex.SLUG, SEEDS
)


def _int(value: int) -> dict:
    return {"result": {"type": "builtins.int", "value": value, "repr": repr(value)}}


def _saved_by_blocks(model, b: int, t: int) -> int:
    """Bytes autograd saves inside the blocks, measured as the lesson does."""
    weights = {p.untyped_storage()._cdata for p in model.parameters()}
    saved = {}

    def pack(x):
        storage = x.untyped_storage()
        if storage._cdata not in weights:
            saved[storage._cdata] = storage.nbytes()
        return x

    x = torch.zeros(b, t, model.config.n_embd, device="meta", requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        for block in model.transformer.h:
            x = block(x)
    return sum(saved.values())


def test_reference_matches_the_lesson():
    assert ex.reference(1, 1024, 768, 12, 12) == 1_220_739_072
    assert ex.reference(1, 128, 768, 12, 12) == 85_155_840


@pytest.mark.parametrize(("b", "t"), [(1, 16), (3, 16), (2, 40)])
def test_reference_matches_what_autograd_saves(b, t):
    with torch.device("meta"):
        model = GPT(get_config("tiny")).train()
    c = model.config
    assert _saved_by_blocks(model, b, t) == ex.reference(
        b, t, c.n_embd, c.n_head, c.n_layer
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_each_slip_gets_its_own_diagnosis(seed):
    for case in ex.make_cases(seed):
        right = ex.reference(**case["args"])
        for wrong, slip, hint in ex._slips(case["args"]):
            [result] = ex.check_case(case, _int(wrong), {})
            if not case["hidden"] and wrong == right:
                # b = 1: one mask, and one sequence's scores, either way
                assert slip in ("mask-per-sequence", "scores-forgot-batch")
                continue
            assert not result.passed
            assert result.diagnosis == slip, (case["name"], slip)
            assert hint in result.message


@pytest.mark.parametrize("seed", range(20))
def test_every_draw_has_a_batch_and_several_layers(seed):
    hidden = [c["args"] for c in ex.make_cases(seed) if c["hidden"]]
    assert all(a["b"] > 1 and a["n_layer"] > 1 and a["n_head"] > 1 for a in hidden)


@pytest.mark.parametrize("seed", range(200))
def test_a_batch_never_equals_the_head_count(seed):
    """Scores for one head and scores for one sequence give the same number
    when b == n_head: no hidden case lets the two slips coincide."""
    hidden = [c["args"] for c in ex.make_cases(seed) if c["hidden"]]
    assert all(a["b"] != a["n_head"] for a in hidden)


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = ex.make_cases(1), ex.make_cases(2)
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]
