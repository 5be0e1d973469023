"""One shared reference model per process.

Building GPT-2 small takes seconds and ~0.5 GB; a grading worker needs it
for every submission, so it is built once and reused.

The returned models are SHARED: callers must not mutate them (no in-place
edits of weights, no re-tying, no .train(), no .to()). Copy first, e.g. with
`copy.deepcopy`, or call `build_model` for a private instance.
"""

from __future__ import annotations

import os
import threading

from .model import GPT, build_model, get_config
from .weights import load_hf_safetensors

_GPT2_NAMES = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")

_models: dict[tuple, GPT] = {}
_lock = threading.Lock()


def reference_model(
    name: str = "gpt2",
    *,
    tied: bool = True,
    seed: int = 0,
    weights_path: str | os.PathLike | None = None,
) -> GPT:
    """The process-wide reference GPT for these arguments (do not mutate it).

    With `weights_path`, the real weights in that Hugging Face
    `model.safetensors` are loaded instead of seeded ones (GPT-2 sizes only).
    """
    config = get_config(name)  # fail fast on an unknown name
    if weights_path is not None:
        if name not in _GPT2_NAMES:
            raise ValueError(
                f"weights_path needs a GPT-2 size ({', '.join(_GPT2_NAMES)}), "
                f"not {name!r}"
            )
        weights_path = os.fspath(weights_path)
    key = (name, tied, seed, weights_path)
    # One lock for all builds: two threads asking at once must not both pay
    # for (and hold) a copy of GPT-2.
    with _lock:
        model = _models.get(key)
        if model is None:
            if weights_path is None:
                model = build_model(config, seed=seed, tied=tied)
            else:
                model = load_hf_safetensors(weights_path, config, tied=tied)
            _models[key] = model
    return model


def clear_reference_cache() -> None:
    """Forget every cached model (for tests and memory-tight workers)."""
    with _lock:
        _models.clear()
