"""teacher-forced-losses in-process: the solution passes, each wrong one is named."""

from __future__ import annotations

import torch
from grading_engine.exercises.base import load_harness
from grading_engine.reference import build_model

from tests.grader.inprocess import (
    grade_in_process,
    load_spec,
    one_thread,  # noqa: F401 (autouse: one torch thread for this module)
    standard_tests,
)

SLUG = "teacher-forced-losses"
SPEC = load_spec(SLUG)
SEEDS = (11, 2026, 7)
MODULE = load_harness(SLUG)

test_the_solution_passes, test_each_wrong_solution_is_named = standard_tests(
    SLUG, SEEDS
)


def test_the_first_visible_case_is_the_lessons_row():
    model, seq = MODULE.inputs(MODULE.make_cases(0)[0])
    g = torch.Generator().manual_seed(0)
    assert torch.equal(seq, torch.randint(0, 97, (1, 13), generator=g))
    losses = MODULE.reference(model, seq)
    assert [round(v, 3) for v in losses[0, :4].tolist()] == [4.548, 4.637, 4.544, 4.617]
    lesson_model = build_model("tiny")
    with torch.no_grad():
        assert torch.equal(model(seq), lesson_model(seq))


def test_a_loop_over_prefixes_passes_too():
    code = (
        "import torch\n"
        "import torch.nn.functional as F\n"
        "def teacher_forced_losses(model, seq):\n"
        "    with torch.no_grad():\n"
        "        return torch.stack([F.cross_entropy(model(seq[:, :i + 1])[:, -1],\n"
        "                            seq[:, i + 1], reduction='none')\n"
        "                            for i in range(seq.shape[1] - 1)], dim=1)\n"
    )
    assert all(r.passed for r in grade_in_process(SLUG, code, 3))


def test_free_running_agrees_only_at_the_first_position():
    model, seq = MODULE.inputs(MODULE.make_cases(0)[1])
    free, forced = MODULE.free_running(model, seq), MODULE.reference(model, seq)
    assert torch.allclose(free[:, 0], forced[:, 0], atol=1e-6)
    assert not torch.allclose(free, forced, atol=1e-3)


def test_a_summed_loss_fails_without_the_mean_diagnosis():
    model, seq = MODULE.inputs(MODULE.make_cases(0)[0])
    total = MODULE.reference(model, seq).sum()
    case = MODULE.make_cases(0)[0]
    data = {"error": None, "output": {"type": "torch.Tensor", "dtype": "torch.float32"}}
    results = MODULE.check_case(case, data, {"output": total})
    assert any(not r.passed for r in results)
    assert "mean-not-per-position" not in {r.diagnosis for r in results}


def test_visible_cases_do_not_depend_on_the_seed_and_hidden_ones_do():
    a, b = MODULE.make_cases(SEEDS[0]), MODULE.make_cases(SEEDS[1])
    assert [c for c in a if not c["hidden"]] == [c for c in b if not c["hidden"]]
    assert [c for c in a if c["hidden"]] != [c for c in b if c["hidden"]]


def test_every_draw_has_a_full_training_row_and_a_two_token_row():
    from grading_engine.exercises.base import load_harness
    from grading_engine.reference import get_config

    module = load_harness("teacher-forced-losses")
    block = get_config("tiny").block_size
    for seed in range(50):
        lengths = {c["t"] for c in module.make_cases(seed) if c["hidden"]}
        assert {block + 1, 2} <= lengths, seed
        assert max(lengths) == block + 1, seed
