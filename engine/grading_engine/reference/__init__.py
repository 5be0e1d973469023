"""The GPT-2 reference every submission is graded against (no Django here).

Names are imported lazily (PEP 562) so that the tokenizer, and its setup
command `python -m grading_engine.reference.tokenizer`, work without importing torch.
Answer code (`counts`, `weights`) lives in modules of its own, which the
sandbox stage replaces with stubs: the child builds models, never answers.
"""

from __future__ import annotations

from grading_engine.lazy import lazy_exports

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
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(name for names in _EXPORTS.values() for name in names)
