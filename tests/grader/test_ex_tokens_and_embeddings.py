"""The four section-1 exercises (embed-at-offset, nearest-tokens, vocab-padding,
embedding-share), graded in process: independent right answers pass, hard-coded
or forged answers fail with a named diagnosis."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from grading_engine.exercises import (
    embed_at_offset,
    embedding_share,
    nearest_tokens,
    vocab_padding,
)

MODULES = (embed_at_offset, embedding_share, nearest_tokens, vocab_padding)


def grade_in_process(module, fn, seed: int = 0):
    checks = []
    for case in module.make_cases(seed):
        data, tensors = module.run_case(fn, case)
        checks += module.check_case(case, data, tensors)
    return checks


def failed_diagnoses(checks) -> set:
    return {c.diagnosis for c in checks if not c.passed}


def test_every_module_follows_the_contract():
    for module in MODULES:
        cases = module.make_cases(0)
        assert {c["hidden"] for c in cases} == {True, False}
        assert len({c["name"] for c in cases}) == len(cases)
        assert module.make_cases(1) != module.make_cases(2)  # randomised per attempt
        assert module.ENTRY_POINT in module.SIGNATURE


def test_embed_at_offset_accepts_an_independent_solution():
    def embed_at(idx, wte, wpe, start):
        if start + idx.shape[1] > wpe.shape[0]:
            raise ValueError("past the last position")
        one_hot = F.one_hot(idx, wte.shape[0]).to(wte.dtype)
        pos = F.one_hot(torch.arange(start, start + idx.shape[1]), wpe.shape[0])
        return one_hot @ wte + pos.to(wpe.dtype) @ wpe

    checks = grade_in_process(embed_at_offset, embed_at, seed=3)
    assert checks and all(c.passed for c in checks), [c.message for c in checks]


class PositionsPastTheTable(ValueError):
    """What a careful learner raises: a ValueError, by a more telling name."""


@pytest.mark.parametrize("kind", [ValueError, PositionsPastTheTable])
def test_embed_at_offset_accepts_a_valueerror_or_a_subclass_of_it(kind):
    def embed_at(idx, wte, wpe, start):
        t = idx.shape[1]
        if start + t > wpe.shape[0]:
            raise kind(f"positions {start}..{start + t - 1} are past the table")
        return wte[idx] + wpe[start : start + t]

    checks = grade_in_process(embed_at_offset, embed_at, seed=3)
    assert checks and all(c.passed for c in checks), [c.message for c in checks]


def test_embed_at_offset_refuses_a_lookalike_error_that_is_no_valueerror():
    class ValueProblem(Exception):
        pass

    def embed_at(idx, wte, wpe, start):
        t = idx.shape[1]
        if start + t > wpe.shape[0]:
            raise ValueProblem("too long")
        return wte[idx] + wpe[start : start + t]

    checks = grade_in_process(embed_at_offset, embed_at, seed=3)
    refused = [c for c in checks if "16-row table" in c.name]
    assert refused and not refused[0].passed
    assert refused[0].diagnosis == "no-length-check"


def test_embed_at_offset_refuses_other_errors_past_the_table():
    def embed_at(idx, wte, wpe, start):
        t = idx.shape[1]
        return wte[idx] + wpe[start : start + t]  # broadcast error past the end

    checks = grade_in_process(embed_at_offset, embed_at, seed=3)
    refused = [c for c in checks if "16-row table" in c.name]
    assert refused and not refused[0].passed
    assert refused[0].diagnosis == "no-length-check"
    assert "RuntimeError" in refused[0].message


@pytest.mark.parametrize("seed", range(0, 200, 7))
def test_embed_at_offset_draws_every_boundary_of_the_table(seed):
    """Each draw has chunks ending just below, on and one past the last row
    (and one further past): the limit check's off-by-ones show every time."""
    overs = set()
    for case in embed_at_offset.make_cases(seed):
        if case["hidden"]:
            _, _, wpe, start = embed_at_offset.inputs(case)
            over = start + case["t"] - wpe.shape[0]  # 0: last token on the last row
            assert case.get("too_long", False) == (over > 0)
            overs.add(over)
    assert {-1, 0, 1} <= overs and max(overs) >= 1 and min(overs) < -1


def test_embed_at_offset_names_a_refused_chunk_that_fits():
    def embed_at(idx, wte, wpe, start):
        t = idx.shape[1]
        if start + t >= wpe.shape[0]:  # off by one: the last row is usable
            raise ValueError("positions past the table")
        return wte[idx] + wpe[start : start + t]

    checks = grade_in_process(embed_at_offset, embed_at, seed=5)
    failed = [c for c in checks if not c.passed]
    assert [c.name for c in failed] == [
        "hidden 3: ending on the last row",
        "hidden: tiny, 3 tokens ending on the last row of a 16-row table",
    ]
    for check in failed:
        assert check.diagnosis == "length-check-off-by-one"
        assert "start + t > wpe.shape[0]" in check.message


def test_embed_at_offset_names_a_limit_check_that_lets_one_past_through():
    def embed_at(idx, wte, wpe, start):
        t = idx.shape[1]
        if start + t - 1 > wpe.shape[0]:  # off by one: lets position T through
            raise ValueError("positions past the table")
        return wte[idx] + wpe[start : start + t]

    checks = grade_in_process(embed_at_offset, embed_at, seed=5)
    failed = {c.name: c for c in checks if not c.passed}
    one_past = failed["hidden 4: ending one past the last row"]
    assert one_past.diagnosis == "no-length-check"
    assert "exactly one past the table" in one_past.message


def test_embed_at_offset_names_one_position_for_the_whole_chunk():
    def embed_at(idx, wte, wpe, start):
        if start + idx.shape[1] > wpe.shape[0]:
            raise ValueError("positions past the table")
        return wte[idx] + wpe[start]

    checks = grade_in_process(embed_at_offset, embed_at, seed=5)
    assert "positions-not-advanced" in failed_diagnoses(checks)


@pytest.mark.parametrize("seed", range(0, 200, 7))
def test_vocab_padding_draws_on_just_past_and_just_short_of_a_multiple(seed):
    """Rounding mistakes that agree with the ceiling away from a boundary
    meet all three kinds of vocabulary in every draw."""
    kinds = set()
    for case in vocab_padding.make_cases(seed):
        args = case["args"]
        if case["hidden"] and case["name"].startswith("random"):
            rest = args["vocab_size"] % args["multiple"]
            kinds.add({0: "on", 1: "just past"}.get(rest, rest - args["multiple"]))
    assert kinds == {"on", "just past", -1}


def test_nearest_tokens_accepts_a_tensor_of_ids_and_float64_math():
    def nearest(W, token_id, k):
        W = W.double()
        cos = (W @ W[token_id]) / (W.norm(dim=1) * W[token_id].norm())
        order = torch.argsort(cos, descending=True)
        return order[order != token_id][:k]  # a 1-d int64 tensor

    checks = grade_in_process(nearest_tokens, nearest, seed=4)
    assert checks and all(c.passed for c in checks), [c.message for c in checks]


def test_nearest_tokens_names_returned_scores_and_reversed_order():
    def scores(W, token_id, k):
        unit = F.normalize(W, dim=1)
        cos = unit @ unit[token_id]
        cos[token_id] = -2
        return cos.topk(k).values.tolist()

    def reversed_order(W, token_id, k):
        unit = F.normalize(W, dim=1)
        cos = unit @ unit[token_id]
        cos[token_id] = -2
        return cos.topk(k).indices.tolist()[::-1]

    assert "not-an-int" in failed_diagnoses(grade_in_process(nearest_tokens, scores))
    named = failed_diagnoses(grade_in_process(nearest_tokens, reversed_order))
    assert "wrong-order" in named


def test_vocab_padding_hard_coded_gpt2_answer_fails_hidden_cases():
    def vocab_padding_fn(vocab_size, multiple, n_embd, tied, bytes_per_element):
        return 50304, 36096, 144384

    checks = grade_in_process(vocab_padding, vocab_padding_fn)
    first = [c for c in checks if c.name.startswith("GPT-2 small")]
    assert first and all(c.passed for c in first)
    assert any(c.hidden and not c.passed for c in checks)


def test_vocab_padding_names_rounding_down():
    def rounded_down(vocab_size, multiple, n_embd, tied, bytes_per_element):
        padded = vocab_size // multiple * multiple
        extra = (padded - vocab_size) * n_embd * (1 if tied else 2)
        return padded, extra, extra * bytes_per_element

    assert "rounded-down" in failed_diagnoses(
        grade_in_process(vocab_padding, rounded_down)
    )


Padding = namedtuple("Padding", "padded extra_params extra_bytes")


@pytest.mark.parametrize(
    "form",
    [
        Padding,  # "a tuple of three ints": a namedtuple is one
        lambda *parts: list(parts),
        lambda *parts: tuple(np.int64(p) for p in parts),  # numpy ints are ints
        lambda *parts: torch.tensor(parts),  # a 1-d tensor of three ints
        lambda *parts: (torch.tensor(parts[0]), *parts[1:]),  # a 0-d tensor
    ],
    ids=["namedtuple", "list", "numpy-ints", "tensor", "0-d-tensor"],
)
def test_vocab_padding_accepts_any_triple_of_integers(form):
    def answer(vocab_size, multiple, n_embd, tied, bytes_per_element):
        padded = -(-vocab_size // multiple) * multiple
        extra = (padded - vocab_size) * n_embd * (1 if tied else 2)
        return form(padded, extra, extra * bytes_per_element)

    checks = grade_in_process(vocab_padding, answer)
    assert checks and all(c.passed for c in checks), [c.message for c in checks]


def test_vocab_padding_still_refuses_floats_and_a_pair():
    def floats(vocab_size, multiple, n_embd, tied, bytes_per_element):
        padded = -(-vocab_size // multiple) * multiple
        extra = (padded - vocab_size) * n_embd * (1 if tied else 2)
        return float(padded), float(extra), float(extra * bytes_per_element)

    assert "not-an-int" in failed_diagnoses(grade_in_process(vocab_padding, floats))
    pair = grade_in_process(vocab_padding, lambda *args: (1, 2))
    assert {c.diagnosis for c in pair} == {"not-a-triple"}


def test_vocab_padding_rejects_a_dict():
    checks = grade_in_process(vocab_padding, lambda *args: {"padded": 1})
    assert {c.diagnosis for c in checks} == {"not-a-triple"}


def test_embedding_share_matches_counting_the_model_by_hand():
    def embedding_share_fn(model):
        seen, total, emb = set(), 0, 0
        tables = {"transformer.wte.weight", "transformer.wpe.weight", "lm_head.weight"}
        for name, p in model.named_parameters(remove_duplicate=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            total += p.numel()
            emb += p.numel() if name in tables else 0
        return emb / total

    checks = grade_in_process(embedding_share, embedding_share_fn, seed=5)
    assert checks and all(c.passed for c in checks), [c.message for c in checks]


def test_embedding_share_names_a_tensor_and_a_percentage():
    def as_tensor(model):
        n = sum(p.numel() for p in model.parameters())
        emb = (
            model.transformer.wte.weight.numel() + model.transformer.wpe.weight.numel()
        )
        if model.lm_head.weight is not model.transformer.wte.weight:
            emb += model.lm_head.weight.numel()
        return torch.tensor(emb / n)

    def as_percent(model):
        return 100 * float(as_tensor(model))

    # A 0-d tensor is a number: the prompt asks for a fraction, not a type.
    checks = grade_in_process(embedding_share, as_tensor)
    assert checks and all(c.passed for c in checks), [c.message for c in checks]
    as_row = grade_in_process(embedding_share, lambda m: as_tensor(m).reshape(1, 1))
    assert failed_diagnoses(as_row) == {"not-a-float"}
    named = failed_diagnoses(grade_in_process(embedding_share, as_percent))
    assert "percent-not-fraction" in named
