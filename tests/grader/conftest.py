"""Fixtures for grader tests: shared reference models and a Hugging Face twin.

`gpt2_small` is built once per session and shared: do not mutate it (copy it
or use `tiny_model`, which is fresh for every test).
"""

from __future__ import annotations

import re

import pytest
import torch
from grading_engine.reference import GPT, GPTConfig, build_model, reference_model

# Hugging Face's GPT-2 keeps these four weights in Conv1D layout (in, out).
_HF_CONV1D = re.compile(r"\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$")


@pytest.fixture(scope="session")
def gpt2_small() -> GPT:
    """GPT-2 small, tied, seed 0: the process-wide reference. Read-only."""
    return reference_model("gpt2", tied=True, seed=0)


@pytest.fixture
def tiny_model() -> GPT:
    """A fresh tied "tiny" GPT (seed 0) that a test may change freely."""
    return build_model("tiny", seed=0)


def hf_config(config: GPTConfig):
    """The GPT2Config that describes the same network as `config`."""
    from transformers import GPT2Config

    return GPT2Config(
        vocab_size=config.vocab_size,
        n_positions=config.block_size,
        n_embd=config.n_embd,
        n_layer=config.n_layer,
        n_head=config.n_head,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        layer_norm_epsilon=config.layer_norm_eps,
        tie_word_embeddings=config.tied,
        attn_implementation="eager",
    )


def hf_model_with_weights_of(model: GPT):
    """A transformers GPT2LMHeadModel holding `model`'s weights.

    Written independently of grading_engine.reference.weights, so that comparing the
    two models tests the reference rather than its own converter.
    """
    from transformers import GPT2LMHeadModel
    from transformers.modeling_utils import no_init_weights

    with no_init_weights():  # every weight is overwritten below
        hf = GPT2LMHeadModel(hf_config(model.config))
    if model.config.tied:
        hf.tie_weights()
    sd = {}
    for key, tensor in model.state_dict().items():
        sd[key] = tensor.t() if _HF_CONV1D.search(key) else tensor
    hf.load_state_dict(sd, strict=True)
    return hf.eval()


def random_hf_model(config: GPTConfig, seed: int):
    """A transformers GPT2LMHeadModel with its own random init."""
    from transformers import GPT2LMHeadModel

    with torch.random.fork_rng():  # seeded, without reseeding the process
        torch.manual_seed(seed)
        return GPT2LMHeadModel(hf_config(config)).eval()


@pytest.fixture
def hf_twin():
    """`hf_twin(model)`: the transformers GPT2LMHeadModel with model's weights."""
    return hf_model_with_weights_of


@pytest.fixture
def random_hf():
    """`random_hf(config, seed)`: a randomly initialised GPT2LMHeadModel."""
    return random_hf_model
