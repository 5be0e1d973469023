"""The running example: GPT-2 small reading "The sky is".

Visible cases of several exercises use it, so a learner sees real token
ids, the real embedding tables and the real next-token logits.
"""

from __future__ import annotations

import functools

import torch

from grading_engine.reference.cache import reference_model

SKY = [464, 6766, 318]  # "The sky is"
SKY_TEXT = "The sky is"


@functools.lru_cache(maxsize=1)
def sky_hidden_state() -> torch.Tensor:
    """The reference's ln_f output for "The sky is": (1, 3, 768)."""
    model = reference_model("gpt2")
    with torch.no_grad():
        return model.forward_trace(torch.tensor([SKY]))["ln_f"].detach()


def gpt2_head() -> torch.Tensor:
    """GPT-2 small's (vocab, n_embd) output head, detached."""
    return reference_model("gpt2").lm_head.weight.detach()


def gpt2_tables() -> tuple[torch.Tensor, torch.Tensor]:
    """GPT-2 small's (wte, wpe) embedding tables, detached."""
    transformer = reference_model("gpt2").transformer
    return transformer.wte.weight.detach(), transformer.wpe.weight.detach()
