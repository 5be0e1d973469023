"""The GPT-2 reference every submission is graded against (no Django here).

Names are imported lazily (PEP 562) so that the tokenizer, and its setup
command `python -m grader.reference.tokenizer`, work without importing torch.
Answer code (`counts`, `weights`) lives in modules of its own, which the
sandbox stage replaces with stubs: the child builds models, never answers.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "cache": ("clear_reference_cache", "reference_model"),
    "counts": (
        "block_parameter_count",
        "count_parameters",
        "gpt2_parameter_count",
        "parameter_breakdown",
    ),
    "model": (
        "CONFIGS",
        "GPT",
        "MLP",
        "Block",
        "CausalSelfAttention",
        "GPTConfig",
        "build_model",
        "empty_model",
        "get_config",
    ),
    "tokenizer": ("default_cache_dir", "get_encoding", "install_tiktoken_cache"),
    "weights": ("convert_hf_state_dict", "infer_config", "load_hf_safetensors"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
