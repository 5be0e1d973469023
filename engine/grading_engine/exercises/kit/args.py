"""Value exercises whose case is a row of arguments in signature order."""

from __future__ import annotations

from grading_engine.harness.capture import capture_int
from grading_engine.reference import get_config


def args_case(
    keys: tuple[str, ...], name: str, hidden: bool, config: str | None = None, **args
) -> dict:
    """A case holding `args` in the order of `keys`.

    With `config`, the keys a reference config has (vocab_size, n_embd, ...)
    are read from it first; `args` gives the rest. Harnesses bind their keys
    once: `_case = partial(args_case, _ARGS)`.
    """
    if config is not None:
        c = get_config(config)
        args = {**{k: getattr(c, k) for k in keys if hasattr(c, k)}, **args}
    return {"name": name, "hidden": hidden, "args": {k: args[k] for k in keys}}


def call_with_args(fn, case: dict, keys: tuple[str, ...]):
    """Positional, like the signature: a learner may name the parameters freely."""
    return fn(*(case["args"][key] for key in keys))


def int_result(fn, case: dict, keys: tuple[str, ...]) -> tuple[dict, dict]:
    """The usual run_case of an int exercise: call, capture as "result"."""
    return {"result": capture_int(call_with_args(fn, case, keys))}, {}
