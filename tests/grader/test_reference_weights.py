"""Loading Hugging Face GPT-2 safetensors files into the reference."""

from __future__ import annotations

import pickle
import re

import grading_engine.reference.cache as cache_module
import pytest
import torch
from grading_engine.reference import (
    GPT,
    convert_hf_state_dict,
    get_config,
    load_hf_safetensors,
    reference_model,
)
from safetensors.torch import save_file

CONV1D_SUFFIXES = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight")
CONV1D_SUFFIXES += ("mlp.c_proj.weight",)


def redraw(module: torch.nn.Module, seed: int, std: float = 0.3) -> None:
    """Large random weights everywhere, so any layout slip moves the logits."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0.0, std, generator=g)


def released_layout(hf) -> dict[str, torch.Tensor]:
    """The key layout of OpenAI's GPT-2 as published on the Hub.

    GPT2Model keys without the "transformer." prefix, no lm_head, and the
    causal-mask buffers that older exports saved.
    """
    sd = {k: v.clone() for k, v in hf.transformer.state_dict().items()}
    n = hf.config.n_positions
    for i in range(hf.config.n_layer):
        sd[f"h.{i}.attn.bias"] = torch.ones(n, n).tril().view(1, 1, n, n)
        sd[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
    return sd


def lm_head_layout(hf) -> dict[str, torch.Tensor]:
    """GPT2LMHeadModel keys, with the head saved as its own tensor."""
    return {k: v.clone() for k, v in hf.state_dict().items()}


def hf_logits(hf, idx: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return hf(idx).logits


def our_logits(model: GPT, idx: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(idx)


def tokens(vocab_size: int, t: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(
        0, vocab_size, (2, t), generator=torch.Generator().manual_seed(seed)
    )


@pytest.fixture
def tiny_hf(random_hf):
    """A tied tiny GPT2LMHeadModel with large random weights."""
    hf = random_hf(get_config("tiny"), seed=0)
    redraw(hf, seed=1)
    return hf


def test_it_loads_the_released_layout_and_reproduces_hf_logits(tiny_hf, tmp_path):
    path = tmp_path / "model.safetensors"
    save_file(released_layout(tiny_hf), path)

    model = load_hf_safetensors(path, get_config("tiny"))

    assert model.lm_head.weight is model.transformer.wte.weight
    assert not model.training
    idx = tokens(97, 16)
    assert (our_logits(model, idx) - hf_logits(tiny_hf, idx)).abs().max() < 1e-5


def test_it_loads_the_lm_head_layout_with_the_transformer_prefix(tiny_hf, tmp_path):
    path = tmp_path / "model.safetensors"
    save_file(lm_head_layout(tiny_hf), path)

    model = load_hf_safetensors(path, get_config("tiny"))

    idx = tokens(97, 12, seed=1)
    assert (our_logits(model, idx) - hf_logits(tiny_hf, idx)).abs().max() < 1e-5


def test_it_loads_an_untied_checkpoint_only_when_asked_to(random_hf, tmp_path):
    config = get_config("mini", tied=False)
    hf = random_hf(config, seed=2)
    redraw(hf, seed=3)
    assert hf.lm_head.weight is not hf.transformer.wte.weight
    path = tmp_path / "model.safetensors"
    save_file(lm_head_layout(hf), path)

    model = load_hf_safetensors(path, config, tied=False)
    assert model.lm_head.weight is not model.transformer.wte.weight
    idx = tokens(211, 32, seed=2)
    assert (our_logits(model, idx) - hf_logits(hf, idx)).abs().max() < 1e-5

    with pytest.raises(ValueError, match="tied=False"):
        load_hf_safetensors(path, config, tied=True)


def test_an_untied_load_of_a_file_without_head_copies_wte(tiny_hf, tmp_path):
    path = tmp_path / "model.safetensors"
    save_file(released_layout(tiny_hf), path)

    model = load_hf_safetensors(path, get_config("tiny"), tied=False)

    assert model.lm_head.weight is not model.transformer.wte.weight
    assert torch.equal(model.lm_head.weight, model.transformer.wte.weight)


def test_it_infers_a_gpt2_config_from_tensor_shapes(random_hf, tmp_path):
    # GPT-2 small's width, so n_head can be inferred, at a tiny depth and vocab.
    shape = get_config("tiny", n_embd=768, n_head=12, n_layer=1)
    hf = random_hf(shape, seed=4)
    redraw(hf, seed=5, std=0.05)
    path = tmp_path / "model.safetensors"
    save_file(released_layout(hf), path)

    model = load_hf_safetensors(path)

    c = model.config
    assert (c.vocab_size, c.block_size, c.n_layer, c.n_head, c.n_embd) == (
        97,
        16,
        1,
        12,
        768,
    )
    idx = tokens(97, 16, seed=4)
    assert (our_logits(model, idx) - hf_logits(hf, idx)).abs().max() < 1e-5


def test_it_asks_for_a_config_when_the_width_is_not_a_gpt2_width(tiny_hf, tmp_path):
    path = tmp_path / "model.safetensors"
    save_file(released_layout(tiny_hf), path)
    with pytest.raises(ValueError, match="n_head"):
        load_hf_safetensors(path)


def test_it_names_missing_keys(tiny_hf, tmp_path):
    sd = released_layout(tiny_hf)
    del sd["h.1.mlp.c_fc.bias"]
    path = tmp_path / "model.safetensors"
    save_file(sd, path)
    with pytest.raises(
        ValueError, match=r"missing keys: transformer\.h\.1\.mlp\.c_fc\.bias"
    ):
        load_hf_safetensors(path, get_config("tiny"))


def test_it_names_unexpected_keys(tiny_hf, tmp_path):
    sd = released_layout(tiny_hf)
    sd["h.0.attn.rotary.weight"] = torch.zeros(3)
    path = tmp_path / "model.safetensors"
    save_file(sd, path)
    with pytest.raises(
        ValueError, match=r"unexpected keys: transformer\.h\.0\.attn\.rotary"
    ):
        load_hf_safetensors(path, get_config("tiny"))


def test_it_names_a_shape_mismatch(tiny_hf, tmp_path):
    path = tmp_path / "model.safetensors"
    save_file(released_layout(tiny_hf), path)
    wrong = get_config("tiny", block_size=8)
    expected = "transformer.wpe.weight: checkpoint has shape (16, 16), model expects"
    with pytest.raises(ValueError, match=re.escape(expected + " (8, 16)")):
        load_hf_safetensors(path, wrong)


def test_it_never_unpickles_a_checkpoint(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(pickle.dumps({"wte.weight": Payload()}))

    def refuse(*args, **kwargs):
        raise AssertionError("a checkpoint was unpickled")

    monkeypatch.setattr(torch, "load", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)
    with pytest.raises(ValueError, match="not a safetensors file"):
        load_hf_safetensors(path, get_config("tiny"))
    assert not marker.exists()


def test_convert_transposes_exactly_the_conv1d_weights(tiny_hf):
    hf_sd = lm_head_layout(tiny_hf)
    ours = convert_hf_state_dict(hf_sd)
    reference_shapes = {
        k: v.shape for k, v in GPT(get_config("tiny")).state_dict().items()
    }
    assert set(ours) == set(reference_shapes)
    for key, tensor in hf_sd.items():
        if key.endswith(CONV1D_SUFFIXES):
            assert torch.equal(ours[key], tensor.t()), key
        else:
            assert torch.equal(ours[key], tensor), key
        assert ours[key].shape == reference_shapes[key], key


def test_convert_drops_mask_buffers_and_uses_wte_as_the_missing_head(tiny_hf):
    ours = convert_hf_state_dict(released_layout(tiny_hf))
    buffers = re.compile(r"\.attn\.(bias|masked_bias)$")
    assert not [k for k in ours if buffers.search(k)]
    assert all(k.startswith("transformer.") or k == "lm_head.weight" for k in ours)
    assert torch.equal(ours["lm_head.weight"], ours["transformer.wte.weight"])


def test_reference_model_loads_real_weights_for_a_gpt2_size(
    gpt2_small, hf_twin, tmp_path
):
    # A full-size file in the released layout, built from the seeded model.
    hf = hf_twin(gpt2_small)
    path = tmp_path / "model.safetensors"
    save_file(released_layout(hf), path)
    del hf

    loaded = reference_model("gpt2", weights_path=path, seed=123)

    assert loaded is not gpt2_small
    assert reference_model("gpt2", weights_path=path, seed=123) is loaded
    assert loaded.lm_head.weight is loaded.transformer.wte.weight
    for (key, mine), (_, theirs) in zip(
        sorted(loaded.state_dict().items()), sorted(gpt2_small.state_dict().items())
    ):
        assert torch.equal(mine, theirs), key


def test_reference_model_passes_the_named_config_to_the_loader(monkeypatch, tmp_path):
    calls = []

    def fake_loader(path, config, *, tied):
        calls.append((path, config, tied))
        return GPT(get_config("tiny"))

    monkeypatch.setattr(cache_module, "load_hf_safetensors", fake_loader)
    path = tmp_path / "medium.safetensors"
    first = reference_model("gpt2-medium", tied=False, weights_path=path)
    again = reference_model("gpt2-medium", tied=False, weights_path=path)

    assert first is again
    assert calls == [(str(path), get_config("gpt2-medium"), False)]
