"""What a gradable exercise is, as plain Python (no Django).

An exercise module lives in `grading_engine/exercises/<slug_with_underscores>.py`
and defines the module-level names below (the shared case builders it uses
live in the `kit/` subpackage, which is not an exercise). Its code runs in
two places:

* `run_case` runs in the CHILD process, next to the learner's code. It builds
  the inputs for one case, calls the learner's function and returns plain
  data: a JSON-able dict and a dict of named tensors. Nothing it returns is
  trusted: the learner can patch anything in the child.
* `make_cases` and `check_case` run in the trusted PARENT. `check_case`
  recomputes what the reference gives for the same case and compares, so a
  forged or rigged result from the child can only fail.

Module contract::

    SLUG: str                       # e.g. "tie-weights"
    ENTRY_POINT: str                # e.g. "tie_weights"
    SIGNATURE: str                  # e.g. "tie_weights(model) -> None"

    def make_cases(seed: int) -> list[dict]:
        '''JSON-able case specs; each has "name" and "hidden" keys.
        The seed varies per attempt so answers cannot be hard-coded.'''

    def run_case(fn, case: dict) -> tuple[dict, dict[str, torch.Tensor]]:
        '''CHILD side: build inputs from `case`, call `fn`, capture plain data.'''

    def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
        '''PARENT side: compare captured data with the reference.'''
"""

from __future__ import annotations

import importlib
from types import ModuleType

CORE_SLUGS = (
    "encode-text",
    "embed-tokens",
    "one-hot-embed",
    "lm-head-logits",
    "count-params",
    "tie-weights",
    "gpt2-param-count",
    "block-param-count",
    "causal-self-attention",
    "softmax-temperature",
    "gpt2-forward",
    "convert-hf-weights",
    "kv-cache-bytes",
    "logit-rank",
)


# Modules of this package that are not one exercise: this contract, and the
# harness every authored exercise shares (grading_engine.authored).
NOT_EXERCISES = ("base", "authored")


def module_name(harness: str) -> str:
    """`tie-weights` -> `grading_engine.exercises.tie_weights`."""
    return "grading_engine.exercises." + harness.replace("-", "_")


def harness_slugs() -> list[str]:
    """The slug of every built-in exercise module (kit/ and NOT_EXERCISES
    excluded)."""
    import pkgutil

    from grading_engine import exercises

    return sorted(
        info.name.replace("_", "-")
        for info in pkgutil.iter_modules(exercises.__path__)
        if not info.ispkg and info.name not in NOT_EXERCISES
    )


def load_harness(harness: str) -> ModuleType:
    """Import the exercise module that grades `harness` (a slug).

    Only a module that defines an exercise counts: the kit package
    (`exercises/kit/`) and this module share the namespace but are refused.
    """
    if not harness.replace("-", "").isalnum():
        raise LookupError(f"invalid harness name {harness!r}")
    try:
        module = importlib.import_module(module_name(harness))
    except ModuleNotFoundError as exc:
        raise LookupError(f"no grading harness named {harness!r}") from exc
    if not is_harness(module):
        raise LookupError(f"no grading harness named {harness!r}")
    return module


def is_harness(module: ModuleType) -> bool:
    """An exercise module, not a package: it names its slug and runs cases.

    (check_case is not asked for: the sandbox's staged copy has none.)
    """
    is_package = hasattr(module, "__path__")
    return not is_package and all(
        hasattr(module, name) for name in ("SLUG", "ENTRY_POINT", "run_case")
    )
