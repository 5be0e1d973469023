"""The six value exercises, in process: right answers computed independently
pass every case, hard-coded answers fail the hidden ones."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from grading_engine.exercises import (
    block_param_count,
    count_params,
    encode_text,
    gpt2_param_count,
    kv_cache_bytes,
    tie_weights,
)
from grading_engine.reference import GPT, Block, get_config


def grade_in_process(module, fn, seed: int = 0):
    checks = []
    for case in module.make_cases(seed):
        data, tensors = module.run_case(fn, case)
        checks += module.check_case(case, data, tensors)
    return checks


def all_pass(checks) -> bool:
    return bool(checks) and all(check.passed for check in checks)


def hidden_fail(checks) -> bool:
    return any(check.hidden and not check.passed for check in checks)


def test_every_module_follows_the_contract():
    for module in (
        block_param_count,
        count_params,
        encode_text,
        gpt2_param_count,
        kv_cache_bytes,
        tie_weights,
    ):
        cases = module.make_cases(0)
        assert {c["hidden"] for c in cases} == {True, False}
        assert len({c["name"] for c in cases}) == len(cases)
        assert module.make_cases(1) != module.make_cases(2)  # randomised per attempt
        assert module.ENTRY_POINT in module.SIGNATURE


def test_kv_cache_matches_real_tensors():
    def measured(n_layer, n_embd, seq_len, batch_size, bytes_per_element):
        # The size the cache tensors would really take, scaled from a small
        # stand-in (one element of the requested width per slot).
        dtype = {1: torch.int8, 2: torch.float16, 4: torch.float32, 8: torch.float64}
        k = torch.empty(1, 1, 1, 1, dtype=dtype[bytes_per_element])
        per_slot = k.element_size()
        return 2 * n_layer * batch_size * seq_len * n_embd * per_slot

    assert all_pass(grade_in_process(kv_cache_bytes, measured, seed=5))


def test_kv_cache_rejects_a_hard_coded_answer():
    checks = grade_in_process(kv_cache_bytes, lambda *a, **k: 75_497_472)
    assert checks[0].passed and hidden_fail(checks)


def _block_count(n_embd):
    with torch.device("meta"):
        block = Block(get_config("tiny", n_embd=n_embd, n_head=1))
    return sum(p.numel() for p in block.parameters())


def test_block_count_matches_a_real_block():
    assert all_pass(grade_in_process(block_param_count, _block_count, seed=3))


def test_block_count_names_missing_layernorms():
    checks = grade_in_process(block_param_count, lambda d: 12 * d * d + 9 * d)
    assert {c.diagnosis for c in checks} == {"forgot-layernorms"}


def _built_count(vocab_size, block_size, n_embd, n_layer, tied=True):
    config = get_config(
        "tiny",
        vocab_size=vocab_size,
        block_size=block_size,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=1,
        tied=tied,
    )
    with torch.device("meta"):
        model = GPT(config)
    if tied:
        model.tie_weights()
    return sum(p.numel() for p in model.parameters())


def test_gpt2_count_matches_real_models():
    assert all_pass(grade_in_process(gpt2_param_count, _built_count, seed=7))


def test_gpt2_count_rejects_the_small_tied_constant():
    checks = grade_in_process(gpt2_param_count, lambda *a, **k: 124_439_808)
    assert checks[0].passed and hidden_fail(checks)


def _distinct_count(model):
    seen = {}
    for module in model.modules():
        for p in module.parameters(recurse=False):
            seen[id(p)] = p.numel()
    return sum(seen.values())


def test_count_params_accepts_an_independent_count():
    assert all_pass(grade_in_process(count_params, _distinct_count, seed=11))


def test_count_params_names_the_gpt2_double_count():
    def state_dict_sum(model):
        return sum(t.numel() for t in model.state_dict().values())

    checks = grade_in_process(count_params, state_dict_sum)
    first = checks[0]  # gpt2, tied
    assert first.diagnosis == "counted-shared-twice"
    assert "you counted the shared wte/lm_head tensor twice (+38,597,376)" in (
        first.message
    )
    assert "transformer.h.11" in first.message  # the breakdown


def test_count_params_hidden_models_hold_buffers_and_frozen_params():
    checks = grade_in_process(
        count_params,
        lambda m: sum(p.numel() for p in m.parameters() if p.requires_grad),
    )
    assert "skipped-frozen" in {c.diagnosis for c in checks}


def test_encode_text_accepts_tiktoken_and_rejects_a_lookup_table():
    import tiktoken
    from grading_engine.reference.tokenizer import get_encoding

    get_encoding()  # puts the offline files where tiktoken looks
    enc = tiktoken.get_encoding("gpt2")
    assert all_pass(grade_in_process(encode_text, enc.encode, seed=4))

    table = {"The sky is": [464, 6766, 318], "I ate an": [40, 15063, 281]}
    checks = grade_in_process(encode_text, lambda text: table.get(text, []))
    assert checks[0].passed and checks[1].passed and hidden_fail(checks)


def test_encode_text_shows_both_lists_token_by_token():
    checks = grade_in_process(encode_text, lambda text: list(text.encode()))
    assert checks[0].diagnosis == "utf8-bytes"
    assert "464 'The'" in checks[0].message
    assert "6766 ' sky'" in checks[0].message


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["head-to-wte", "wte-to-head"])
def test_tie_weights_accepts_either_direction(direction):
    def tie(model):
        if direction == "head-to-wte":
            model.lm_head.weight = model.transformer.wte.weight
        else:
            model.transformer.wte.weight = model.lm_head.weight

    # run_case ties the shared cached model, so work on a private copy.
    from grading_engine.reference import clear_reference_cache

    clear_reference_cache()
    try:
        assert all_pass(grade_in_process(tie_weights, tie, seed=2))
    finally:
        clear_reference_cache()


@pytest.mark.slow
def test_tie_weights_names_a_copy():
    def copy(model):
        weight = model.transformer.wte.weight
        model.lm_head.weight = nn.Parameter(weight.detach().clone())

    from grading_engine.reference import clear_reference_cache

    clear_reference_cache()
    try:
        checks = grade_in_process(tie_weights, copy, seed=2)
    finally:
        clear_reference_cache()
    assert "copied-not-shared" in {c.diagnosis for c in checks}
    assert any("38,597,376-element tensor" in c.message for c in checks)
