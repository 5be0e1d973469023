"""Load real GPT-2 weights from a Hugging Face `model.safetensors`.

Only safetensors is read: a pickle-based checkpoint can run code when it is
loaded, so none is ever opened.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file

from .model import GPT, GPTConfig, empty_model

# OpenAI trained GPT-2 with a TensorFlow Conv1D whose weight is (in, out);
# Hugging Face kept that layout. nn.Linear stores (out, in).
_CONV1D = re.compile(
    r"^transformer\.h\.\d+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$"
)
# The causal mask and its fill value, saved as buffers by older checkpoints.
_MASK_BUFFERS = re.compile(r"^transformer\.h\.\d+\.attn\.(bias|masked_bias)$")
_LAYER = re.compile(r"^transformer\.h\.(\d+)\.")

# Heads per width of the four released sizes; the checkpoint does not say.
_N_HEAD_BY_WIDTH = {768: 12, 1024: 16, 1280: 20, 1600: 25}


def convert_hf_state_dict(hf_sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Map GPT2Model / GPT2LMHeadModel keys and layouts to this reference.

    Accepts both "transformer.h.0..." (GPT2LMHeadModel) and "h.0..." (the
    released `model.safetensors`, a GPT2Model). When the file has no
    lm_head, the head is wte, as it was in training.
    """
    out: dict[str, torch.Tensor] = {}
    for key, tensor in hf_sd.items():
        if key != "lm_head.weight" and not key.startswith("transformer."):
            key = "transformer." + key
        if _MASK_BUFFERS.match(key):
            continue
        if _CONV1D.match(key):
            tensor = tensor.t().contiguous()
        out[key] = tensor
    if "lm_head.weight" not in out and "transformer.wte.weight" in out:
        out["lm_head.weight"] = out["transformer.wte.weight"]
    return out


def infer_config(sd: dict[str, torch.Tensor]) -> GPTConfig:
    """Read a GPT-2 config off a converted state dict's shapes."""
    try:
        vocab_size, n_embd = sd["transformer.wte.weight"].shape
        block_size = sd["transformer.wpe.weight"].shape[0]
    except KeyError as exc:
        raise ValueError(f"not a GPT-2 checkpoint: no {exc.args[0]}") from None
    layers = {int(m.group(1)) for k in sd if (m := _LAYER.match(k))}
    if n_embd not in _N_HEAD_BY_WIDTH:
        raise ValueError(
            f"cannot infer n_head for width {n_embd}: pass a GPTConfig "
            f"(known widths: {sorted(_N_HEAD_BY_WIDTH)})"
        )
    return GPTConfig(
        vocab_size=vocab_size,
        block_size=block_size,
        n_layer=len(layers),
        n_head=_N_HEAD_BY_WIDTH[n_embd],
        n_embd=n_embd,
    )


def _check_state_dict(model: GPT, sd: dict[str, torch.Tensor]) -> None:
    """Refuse a partial or misshapen checkpoint before copying anything."""
    want = model.state_dict()
    missing = sorted(set(want) - set(sd))
    unexpected = sorted(set(sd) - set(want))
    problems = []
    if missing:
        problems.append(f"missing keys: {', '.join(missing)}")
    if unexpected:
        problems.append(f"unexpected keys: {', '.join(unexpected)}")
    for key in sorted(set(want) & set(sd)):
        if want[key].shape != sd[key].shape:
            problems.append(
                f"{key}: checkpoint has shape {tuple(sd[key].shape)}, "
                f"model expects {tuple(want[key].shape)}"
            )
    head, wte = sd.get("lm_head.weight"), sd.get("transformer.wte.weight")
    if (
        model.config.tied
        and head is not None
        and wte is not None
        and head.shape == wte.shape
        and not torch.equal(head, wte)
    ):
        problems.append(
            "lm_head.weight differs from wte.weight: the checkpoint is untied, "
            "load it with tied=False"
        )
    if problems:
        raise ValueError("cannot load checkpoint: " + "; ".join(problems))


def load_hf_safetensors(
    path: str | os.PathLike, config: GPTConfig | None = None, *, tied: bool = True
) -> GPT:
    """A reference GPT holding the weights of a Hugging Face GPT-2 file."""
    try:
        hf_sd = load_file(os.fspath(path), device="cpu")
    except SafetensorError as exc:
        raise ValueError(f"{os.fspath(path)} is not a safetensors file: {exc}") from exc
    sd = convert_hf_state_dict(hf_sd)
    if config is None:
        config = infer_config(sd)
    config = replace(config, tied=tied)
    model = empty_model(config)
    _check_state_dict(model, sd)
    with torch.no_grad():
        # A tied model lists the shared Parameter under both names; copying
        # twice is harmless because _check_state_dict proved them equal.
        model.load_state_dict(sd, strict=True)
    return model.eval()
