"""One shared reference model per process.

Building GPT-2 small takes seconds and ~0.5 GB; a grading worker needs it
for every submission, so it is built once and reused.

The returned models are SHARED: callers must not mutate them (no in-place
edits of weights, no re-tying, no .train(), no .to()). Copy first, e.g. with
`copy.deepcopy`, or call `build_model` for a private instance. The one
exception is `model_to_change`: in a process that ends with its job (a
sandbox job's fork, the one-shot harness) the cached model itself is handed
out, since nothing after the job can read what it did.
"""

from __future__ import annotations

import copy
import os
import threading

from .model import GPT, build_model, get_config

_GPT2_NAMES = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")


def load_hf_safetensors(*args, **kwargs) -> GPT:
    """reference.weights.load_hf_safetensors, imported when first called: the
    converter is an exercise's answer, which the learner edition of the
    engine leaves out (it never loads real weights)."""
    from .weights import load_hf_safetensors as load

    return load(*args, **kwargs)


_models: dict[tuple, GPT] = {}
_lock = threading.Lock()
# Set by a process that exits when its one job is done; never unset.
_ends_with_its_job = False


def process_ends_with_its_job() -> None:
    """Mark this process as one that exits when its job ends.

    Called by the sandbox's job child (a fork of the warm zygote that
    `os._exit`s after the job) and by the one-shot harness. What a job does
    to a cached model there dies with it: the zygote and every later job
    keep their own, untouched copy-on-write pages.
    """
    global _ends_with_its_job
    _ends_with_its_job = True


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


def model_to_change(name: str = "gpt2", *, tied: bool = True, seed: int = 0) -> GPT:
    """A reference model the caller may change in place (tie, re-tie, edit).

    In a process that ends with its job, the cached model itself: copying
    GPT-2 small costs ~0.4 s and ~0.5 GB per concurrent grade, and the fork
    already gives the job private pages. In a long-lived process (the
    in-process grader, tests, a notebook) a deep copy, so the cache that
    later callers read stays as built.
    """
    model = reference_model(name, tied=tied, seed=seed)
    return model if _ends_with_its_job else copy.deepcopy(model)


def clear_reference_cache() -> None:
    """Forget every cached model (for tests and memory-tight workers)."""
    with _lock:
        _models.clear()
