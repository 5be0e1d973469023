"""Process-wide torch state that a test or a lesson must leave as it found it.

A lesson's printed figure that depends on the thread count, or a test that
reseeds the global generator, makes every later test in the same worker
depend on the order it ran in. The suite's autouse fixture (tests/conftest.py)
snapshots this state around every test and doctest and fails the one that
leaks a change, naming what changed.
"""

from __future__ import annotations

import hashlib


def torch_state(*, strict_rng: bool = True) -> dict[str, object]:
    """What a test could change for everyone after it, as comparable values.

    strict_rng=False compares only the global generator's seed: a test may
    draw from it (nothing may depend on unseeded draws), but not reseed it,
    which would make every later unseeded draw in the process repeat.
    """
    import torch

    state = {
        "num_threads": torch.get_num_threads(),
        "default_dtype": torch.get_default_dtype(),
        "default_device": str(torch.get_default_device()),
        "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "deterministic_warn_only": (
            torch.is_deterministic_algorithms_warn_only_enabled()
        ),
        "grad_enabled": torch.is_grad_enabled(),
        "anomaly_detection": torch.is_anomaly_enabled(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "print_options": dict(vars(torch._tensor_str.PRINT_OPTS)),
        "global_seed": torch.initial_seed(),
    }
    if strict_rng:
        # The global generator's whole state, not only its seed: drawing from
        # it without restoring also changes what later unseeded code sees.
        state["global_rng"] = hashlib.sha256(
            torch.random.get_rng_state().numpy().tobytes()
        ).hexdigest()[:16]
    return state


def restore_torch_state(state: dict[str, object], rng_state) -> None:
    """Put back what torch_state() recorded (rng_state: get_rng_state())."""
    import torch

    torch.set_num_threads(state["num_threads"])
    torch.set_default_dtype(state["default_dtype"])
    torch.set_default_device(
        None if state["default_device"] == "cpu" else state["default_device"]
    )
    torch.use_deterministic_algorithms(
        state["deterministic_algorithms"],
        warn_only=state["deterministic_warn_only"],
    )
    torch.set_grad_enabled(state["grad_enabled"])
    torch.set_anomaly_enabled(state["anomaly_detection"])
    torch.set_float32_matmul_precision(state["float32_matmul_precision"])
    for name, value in state["print_options"].items():
        setattr(torch._tensor_str.PRINT_OPTS, name, value)
    torch.manual_seed(state["global_seed"])  # initial_seed() reads it back
    torch.random.set_rng_state(rng_state)


def describe_leak(before: dict[str, object], after: dict[str, object]) -> str:
    """One line per changed entry, or '' when nothing changed."""
    return "; ".join(
        f"{name}: {before[name]!r} -> {after[name]!r}"
        for name in before
        if before[name] != after[name]
    )
