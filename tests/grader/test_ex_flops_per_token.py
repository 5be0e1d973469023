"""flops-per-token's formula is what PyTorch's FLOP counter measures."""

from __future__ import annotations

import pytest
import torch
from grading_engine.exercises.flops_per_token import reference
from grading_engine.reference import GPT, get_config
from torch.utils.flop_counter import FlopCounterMode


@pytest.mark.parametrize(("name", "t"), [("tiny", 16), ("mini", 7), ("gpt2", 64)])
@pytest.mark.parametrize("training", [False, True])
def test_reference_matches_flop_counter(name, t, training):
    c = get_config(name)
    with torch.device("meta"):
        model = GPT(c)
    idx = torch.zeros((2, t), dtype=torch.long, device="meta")
    with FlopCounterMode(display=False) as counter:
        logits = model(idx)
        if training:
            logits.sum().backward()
    measured = counter.get_total_flops() // (2 * t)
    assert measured == reference(c.vocab_size, c.n_embd, c.n_layer, t, training)
