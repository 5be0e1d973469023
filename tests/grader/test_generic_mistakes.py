"""Mistakes any tensor exercise can make are named without being listed.

checks.placement: every row of a wrong answer is a row of the answer (a
wrong index, rows of a view in another order), or it holds the answer's
numbers in another order (a view where a transpose was needed).
checks.proportional: it is the answer times one number (a stray scale, a
lost minus sign, zeros never filled in). Here: each name on tensors, the
answers it must stay silent on, the every-case rule, and grades end to end
through exercises that list none of them.
"""

from __future__ import annotations

import pytest
import torch
from grading_engine.checks import placement, proportional
from grading_engine.checks.slip_rules import ruling_out

from tests.grader.inprocess import (
    grade_in_process,
    one_thread,  # noqa: F401 (autouse)
)

TOL = {"rtol": 1e-5, "atol": 1e-6}


@pytest.fixture
def answer():
    return torch.randn(2, 5, 12, generator=torch.Generator().manual_seed(3))


def named(got, expected):
    result = placement.misplaced("case", got, expected, hidden=False, **TOL)
    return None if result is None else (result.diagnosis, result.message)


def test_rows_in_another_order_are_rows_misplaced(answer):
    swapped = answer.reshape(10, 12).view(5, 2, 12).transpose(0, 1)
    diagnosis, message = named(swapped, answer)
    assert diagnosis == "rows-misplaced"
    assert "more than once" not in message


def test_one_row_read_every_time_says_some_rows_are_missing(answer):
    first_sequence_twice = answer[:1].expand(2, 5, 12).clone()
    diagnosis, message = named(first_sequence_twice, answer)
    assert diagnosis == "rows-misplaced"
    assert "some rows appear more than once while others are missing" in message


def test_a_view_where_a_transpose_was_needed_is_values_misplaced(answer):
    heads = answer.view(2, 5, 3, 4).transpose(1, 2)  # the answer: (2, 3, 5, 4)
    regrouped = answer.transpose(1, 2).reshape(2, 3, 5, 4)
    assert named(regrouped, heads)[0] == "values-misplaced"


@pytest.mark.parametrize(
    "wrong",
    [
        lambda a: a * 1.01,  # other numbers
        lambda a: a.roll(1, dims=-1) + 1e-3,  # moved and changed
        lambda a: torch.cat([a[..., :-1], torch.zeros_like(a[..., -1:])], -1),
    ],
    ids=["scaled", "moved-and-changed", "one-column-zeroed"],
)
def test_changed_numbers_are_not_named(answer, wrong):
    assert named(wrong(answer), answer) is None


def test_a_tensor_of_few_distinct_values_is_never_called_reordered():
    mask = torch.tril(torch.ones(6, 6))
    assert named(mask.T.contiguous(), mask) is None  # triu is not a "moved" tril
    repeated = torch.tensor([1.0, 1.0, 1.0, 2.0])
    assert named(repeated.flip(0), repeated) is None


def test_a_wrong_shape_or_a_non_float_is_left_to_the_other_checks(answer):
    assert named(answer.reshape(10, 12), answer) is None
    assert named(answer.long(), answer.long().flip(0)) is None


def test_a_case_agrees_only_when_its_wrong_value_is_moved_numbers(answer):
    moved = answer.flip(1)
    agree = placement.agrees
    assert agree(moved, answer, "rows-misplaced", **TOL) is True
    assert agree(answer * 2, answer, "rows-misplaced", **TOL) is False
    assert agree(answer.clone(), answer, "rows-misplaced", **TOL) is None  # right
    assert agree(moved, answer, "missing-scale", **TOL) is None  # not ours


def test_a_name_ruled_out_by_another_case_is_not_given(answer):
    with ruling_out({"rows-misplaced"}):
        assert named(answer.flip(1), answer) is None


# An exercise that lists neither name: its own slips do not foresee this one.
VIEW_BACK_SWAPPED = """
def logits_for_layout(x, weight, layout):
    b, t, d = x.shape
    flat = x.reshape(b * t, d)
    out = flat @ (weight.t() if layout == "out_in" else weight)
    return out.view(t, b, -1).transpose(0, 1)
"""


def test_a_grade_names_it_when_every_case_agrees():
    failed = [
        r
        for r in grade_in_process("weight-layout-logits", VIEW_BACK_SWAPPED, 1)
        if not r.passed
    ]
    assert failed
    assert {r.diagnosis for r in failed} - {None} == {"rows-misplaced"}


def scaled(got, expected):
    result = proportional.scaled("case", got, expected, hidden=False, **TOL)
    return None if result is None else (result.diagnosis, result.message)


def test_the_answer_times_a_number_is_a_constant_factor(answer):
    diagnosis, message = scaled(answer * 27.7128, answer)
    assert diagnosis == "constant-factor"
    assert "times 27.71" in message
    assert "(1 / 4)" in scaled(answer / 4, answer)[1]


def test_a_lost_minus_sign_and_zeros_have_names_of_their_own(answer):
    assert scaled(-answer, answer)[0] == "sign-flipped"
    assert scaled(torch.zeros_like(answer), answer)[0] == "all-zeros"


@pytest.mark.parametrize(
    ("got", "expected"),
    [
        (torch.tensor(5.0), torch.tensor(2.5)),  # one number: always "a factor"
        (torch.full((4,), 6.0), torch.full((4,), 3.0)),  # a constant answer
        (torch.tensor([2.0, 4.0, 7.0]), torch.tensor([1.0, 2.0, 3.0])),  # not one c
        (torch.tensor([1.0, 2.0, 3.0]) * (1 + 1e-7), torch.tensor([1.0, 2.0, 3.0])),
    ],
    ids=["scalar", "constant-answer", "no-single-factor", "right"],
)
def test_no_factor_is_claimed_where_any_answer_would_fit_or_none_does(got, expected):
    assert scaled(got, expected) is None


def test_a_case_agrees_with_a_factor_only_when_its_wrong_value_has_one(answer):
    agree = proportional.agrees
    assert agree(answer * 3, answer, "constant-factor", **TOL) is True
    assert agree(-answer, answer, "constant-factor", **TOL) is False  # sign-flipped
    assert agree(answer + 1, answer, "constant-factor", **TOL) is False
    assert agree(answer.clone(), answer, "sign-flipped", **TOL) is None  # right


NEGATIVE_LOSSES = """
import torch.nn.functional as F


def teacher_forced_losses(model, seq):
    logp = F.log_softmax(model(seq[:, :-1]), dim=-1)
    return logp.gather(-1, seq[:, 1:].unsqueeze(-1)).squeeze(-1).detach()
"""


def test_a_grade_names_a_lost_minus_sign():
    failed = [
        r
        for r in grade_in_process("teacher-forced-losses", NEGATIVE_LOSSES, 1)
        if not r.passed
    ]
    assert failed
    assert {r.diagnosis for r in failed} - {None} == {"sign-flipped"}
