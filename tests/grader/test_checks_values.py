"""Value checks: exact ints, parameter counts, tied identity and gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
from grading_engine.checks.values import (
    ModuleCount,
    captured_int,
    exact_int,
    parameter_count,
    tied_gradient,
    tied_identity,
)
from grading_engine.harness.capture import capture_int, capture_int_list


class RiggedEq:
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


class SneakyInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def test_it_accepts_an_exact_int():
    result = exact_int("count", capture_int(124_439_808), 124_439_808)
    assert result.passed
    assert result.got == "124,439,808"


def test_it_rejects_a_rigged_eq():
    result = exact_int("count", capture_int(RiggedEq()), 7)
    assert not result.passed
    assert result.diagnosis == "not-an-int"
    assert "RiggedEq" in result.message


def test_an_int_subclass_counts_by_its_stored_value_not_its_eq():
    captured = capture_int(SneakyInt(7))
    assert captured["value"] == 7 and type(captured["value"]) is int
    assert exact_int("count", captured, 7).passed
    assert not exact_int("count", capture_int(SneakyInt(0)), 7).passed


@pytest.mark.parametrize(
    "value",
    [np.int64(7), np.int32(7), np.uint8(7), torch.tensor(7), torch.tensor(7).int()],
    ids=["np.int64", "np.int32", "np.uint8", "0-d int64 tensor", "0-d int32 tensor"],
)
def test_an_integer_of_numpy_or_torch_is_an_int(value):
    captured = capture_int(value)
    assert type(captured["value"]) is int
    assert exact_int("count", captured, 7).passed


@pytest.mark.parametrize(
    "value",
    [np.float64(7.0), np.bool_(True), torch.tensor(7.0), torch.tensor([7])],
    ids=["np.float64", "np.bool", "0-d float tensor", "1-element 1-d tensor"],
)
def test_floats_bools_and_bigger_tensors_are_not_ints(value):
    result = exact_int("count", capture_int(value), 7 if value.dtype != bool else 1)
    assert not result.passed and result.diagnosis == "not-an-int"


def test_it_rejects_a_float_equal_to_the_int():
    result = exact_int("count", capture_int(7.0), 7)
    assert not result.passed
    assert "float" in result.message


def test_it_rejects_a_bool_even_where_it_equals_one():
    result = exact_int("count", capture_int(True), 1)
    assert not result.passed
    assert "bool" in result.message


def test_it_rejects_a_forged_record():
    assert captured_int({"type": "builtins.int", "value": 7.0}) is None
    assert captured_int({"type": "builtins.int", "value": True}) is None
    assert not exact_int("count", {"type": "builtins.int", "value": "7"}, 7).passed
    assert not exact_int("count", None, 7).passed


def test_it_reports_a_wrong_int_with_the_difference():
    result = exact_int("count", capture_int(163_037_184), 124_439_808)
    assert not result.passed
    assert "expected 124,439,808, got 163,037,184" in result.message
    assert "+38,597,376" in result.message


def test_capture_keeps_huge_ints_out_of_the_record():
    captured = capture_int(10**5000)
    assert captured["value"] is None
    assert "bits" in captured["repr"]


def test_capture_of_a_list_records_each_item():
    captured = capture_int_list([1, np.int64(2)])
    assert [item["type"] for item in captured["items"]] == [
        "builtins.int",
        "numpy.int64",
    ]
    assert [i["value"] for i in capture_int_list((1, 2))["items"]] == [1, 2]
    assert capture_int_list("12")["items"] is None
    assert capture_int_list({1: 2})["items"] is None


def _tied_model():
    model = nn.Module()
    model.embed = nn.Embedding(11, 3)
    model.head = nn.Linear(3, 11, bias=False)
    model.head.weight = model.embed.weight
    model.register_buffer("mask", torch.ones(5))
    return model


def _count_args(model):
    distinct = {id(p): p for p in model.parameters()}
    expected = sum(p.numel() for p in distinct.values())
    every_use = sum(
        p.numel() for _, p in model.named_parameters(remove_duplicate=False)
    )
    rows = [
        ModuleCount("embed", 33, capture_int(33)),
        ModuleCount("head", 33, capture_int(33), shared_with="embed"),
    ]
    return expected, dict(
        expected=expected,
        rows=rows,
        shared_extra=every_use - expected,
        shared_label="the shared embed/head tensor",
        buffer_numel=sum(b.numel() for b in model.buffers()),
        state_dict_total=sum(t.numel() for t in model.state_dict().values()),
    )


def test_it_names_a_shared_tensor_counted_twice():
    model = _tied_model()
    expected, args = _count_args(model)
    twice = sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))
    result = parameter_count("count", capture_int(twice), **args)
    assert result.diagnosis == "counted-shared-twice"
    assert "you counted the shared embed/head tensor twice (+33)" in result.message
    assert "shares its tensor with embed" in result.message  # the breakdown


def test_it_names_counted_buffers_and_the_state_dict():
    model = _tied_model()
    expected, args = _count_args(model)
    with_buffers = expected + sum(b.numel() for b in model.buffers())
    assert (
        parameter_count("count", capture_int(with_buffers), **args).diagnosis
        == "counted-buffers"
    )
    state = sum(t.numel() for t in model.state_dict().values())
    assert (
        parameter_count("count", capture_int(state), **args).diagnosis
        == "counted-state-dict"
    )


def test_it_explains_the_gpt2_double_count_in_learner_words():
    # Only the numbers matter here: a head of 50,257 x 768 shared with wte.
    head = 50_257 * 768
    result = parameter_count(
        "count",
        capture_int(124_439_808 + head),
        expected=124_439_808,
        rows=[],
        shared_extra=head,
        shared_label="the shared wte/lm_head tensor",
    )
    assert "you counted the shared wte/lm_head tensor twice (+38,597,376)" in (
        result.message
    )


def _facts(head: torch.Tensor, wte: torch.Tensor) -> dict:
    return {
        "same_object": head is wte,
        "same_data_ptr": head.data_ptr() == wte.data_ptr(),
        "same_storage": head.untyped_storage().data_ptr()
        == wte.untyped_storage().data_ptr(),
        "equal_values": head.shape == wte.shape and torch.equal(head, wte),
        "head_shape": list(head.shape),
        "wte_shape": list(wte.shape),
    }


def test_identity_passes_for_one_parameter():
    wte = nn.Parameter(torch.randn(5, 3))
    assert tied_identity("tie", _facts(wte, wte), head_numel=15).passed


def test_identity_names_aliased_data():
    wte = nn.Parameter(torch.randn(5, 3))
    head = nn.Parameter(torch.empty(5, 3))
    head.data = wte.data
    result = tied_identity("tie", _facts(head, wte), head_numel=15)
    assert result.diagnosis == "aliased-data"
    assert "do not alias .data" in result.message


def test_identity_names_a_copy_with_its_size():
    wte = nn.Parameter(torch.randn(50, 3))
    head = nn.Parameter(wte.detach().clone())
    result = tied_identity("tie", _facts(head, wte), head_numel=150)
    assert result.diagnosis == "copied-not-shared"
    assert "its own 150-element tensor" in result.message


def _gradient_parts(shared: bool, alias: bool):
    with torch.random.fork_rng():  # seeded default inits, global state kept
        torch.manual_seed(0)
        embed = nn.Embedding(7, 4)
        head = nn.Linear(4, 7, bias=False)
    if shared:
        head.weight = embed.weight
    elif alias:
        head.weight.data = embed.weight.data
    else:
        with torch.no_grad():
            head.weight.copy_(embed.weight)
    idx = torch.tensor([1, 2, 3, 1])
    head(embed(idx)).square().sum().backward()
    return embed.weight.grad, head.weight.grad


def test_gradient_must_be_the_sum_of_both_uses():
    emb_part, head_part = _gradient_parts(shared=False, alias=False)
    tied_grad, _ = _gradient_parts(shared=True, alias=False)
    assert torch.allclose(tied_grad, emb_part + head_part)  # the premise
    ok = tied_gradient(
        "grad",
        got_wte_grad=tied_grad,
        got_head_grad=tied_grad,
        embedding_part=emb_part,
        head_part=head_part,
        same_storage=True,
    )
    assert ok.passed


def test_gradient_names_aliased_data_and_copies():
    emb_part, head_part = _gradient_parts(shared=False, alias=False)
    aliased_wte_grad, aliased_head_grad = _gradient_parts(shared=False, alias=True)
    aliased = tied_gradient(
        "grad",
        got_wte_grad=aliased_wte_grad,
        got_head_grad=aliased_head_grad,
        embedding_part=emb_part,
        head_part=head_part,
        same_storage=True,
    )
    assert aliased.diagnosis == "aliased-data"
    assert "two Parameters share storage but keep separate gradients" in (
        aliased.message
    )
    copied = tied_gradient(
        "grad",
        got_wte_grad=emb_part,
        got_head_grad=head_part,
        embedding_part=emb_part,
        head_part=head_part,
        same_storage=False,
    )
    assert copied.diagnosis == "copied-not-shared"
    assert "its own 28-element tensor" in copied.message


def test_gradient_fails_without_a_grad():
    emb_part, head_part = _gradient_parts(shared=False, alias=False)
    result = tied_gradient(
        "grad",
        got_wte_grad=None,
        got_head_grad=None,
        embedding_part=emb_part,
        head_part=head_part,
        same_storage=False,
    )
    assert not result.passed
