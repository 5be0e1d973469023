"""inverted-dropout graded in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from grading_engine.exercises.base import load_harness

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "inverted-dropout"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_the_reference_is_f_dropout_with_the_same_mask():
    x = torch.randn(4, 50, generator=torch.Generator().manual_seed(0))
    with torch.random.fork_rng():
        torch.manual_seed(3)
        y = F.dropout(x, p=0.3, training=True)
    dropped = y == 0
    u = torch.where(dropped, torch.zeros_like(x), torch.ones_like(x) * 0.9)
    assert torch.allclose(MODULE.dropout_variant(x, 0.3, True, u), y)
    assert torch.equal(
        MODULE.dropout_variant(x, 0.3, False, u), F.dropout(x, 0.3, False)
    )


def test_every_draw_has_training_and_eval_hidden_cases():
    for seed in range(20):
        hidden = [c for c in MODULE.make_cases(seed) if c["hidden"]]
        assert {c["training"] for c in hidden} == {True, False}
        assert all(c["p"] > 0 for c in hidden)


def test_p_zero_in_training_changes_nothing():
    case = next(c for c in MODULE.make_cases(0) if c["p"] == 0.0)
    x, p, training, u = MODULE.inputs(case)
    assert training and torch.equal(MODULE.dropout_variant(x, p, training, u), x)


def test_an_in_place_mask_is_named():
    code = (
        "def dropout(x, p, training, u):\n"
        "    if training:\n"
        "        x.mul_(u >= p).div_(1 - p)\n"
        "    return x\n"
    )
    failed = [r for r in grade_in_process(SLUG, code, 3) if not r.passed]
    assert "mutated-input" in {r.diagnosis for r in failed}


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = MODULE.make_cases(SEEDS[0]), MODULE.make_cases(SEEDS[1])
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_every_case_has_draws_at_just_below_and_just_above_p():
    """The boundary u == p (kept) is in every case of every draw, so a strict
    u > p cannot pass on a lucky seed."""
    for seed in range(20):
        for case in MODULE.make_cases(seed):
            _, p, _, u = MODULE.inputs(case)
            at = torch.tensor(p, dtype=torch.float32)
            assert (u == at).any(), (seed, case["name"])
            assert (u == torch.nextafter(at, torch.tensor(1.0))).any()
            if p > 0:
                assert (u == torch.nextafter(at, torch.tensor(0.0))).any()
            assert bool(((u >= 0) & (u < 1)).all())


def test_a_strict_comparison_at_p_is_named():
    code = (
        "def dropout(x, p, training, u):\n"
        "    if not training:\n"
        "        return x\n"
        "    return x * (u > p) / (1.0 - p)\n"
    )
    failed = [r for r in grade_in_process(SLUG, code, 5) if not r.passed]
    assert "dropout-boundary" in {r.diagnosis for r in failed}
    assert any(r.hidden for r in failed) and any(not r.hidden for r in failed)
