"""training-state-bytes: weights, gradients and optimizer state per training setup.

Per parameter: fp32 keeps a 4-byte weight and gradient; bf16 mixed precision
keeps 2-byte copies of both plus a 4-byte fp32 master weight. Optimizer
state is fp32: none for SGD, one buffer for momentum, two for Adam.
"""

from __future__ import annotations

import random

from grading_engine.checks.compared import int_compared
from grading_engine.harness.capture import capture_int

SLUG = "training-state-bytes"
ENTRY_POINT = "training_state_bytes"
SIGNATURE = "training_state_bytes(n_params, optimizer, mixed_precision) -> int"
OPTIMIZERS = {"sgd": 0, "momentum": 1, "adam": 2}  # fp32 state buffers each


def reference(n_params: int, optimizer: str, mixed_precision: bool) -> int:
    per_param = (2 + 2 + 4) if mixed_precision else (4 + 4)
    per_param += 4 * OPTIMIZERS[optimizer]
    return n_params * per_param


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "GPT-2 small, Adam, fp32", "hidden": False,
         "args": [124_439_808, "adam", False]},
        {"name": "GPT-2 small, Adam, mixed precision", "hidden": False,
         "args": [124_439_808, "adam", True]},
        # Tells apart, on the visible cases a learner's local check runs,
        # slips that give one number for Adam (grading's tie-breaking).
        {"name": "GPT-2 small, momentum, mixed precision", "hidden": False,
         "args": [124_439_808, "momentum", True]},
        {"name": "GPT-2 xl, SGD, fp32", "hidden": True,
         "args": [1_557_611_200, "sgd", False]},
    ]  # fmt: skip
    for optimizer in OPTIMIZERS:
        for mixed in (False, True):
            n = rng.randint(10_000, 20_000_000_000)
            label = "mixed precision" if mixed else "fp32"
            cases.append(
                {
                    "name": f"random model, {optimizer}, {label}",
                    "hidden": True,
                    "args": [n, optimizer, mixed],
                }
            )
    return cases


def run_case(fn, case: dict):
    return {"result": capture_int(fn(*case["args"]))}, {}


def _slips(n: int, optimizer: str, mixed: bool) -> list[tuple[int, str, str]]:
    states = 4 * OPTIMIZERS[optimizer] * n
    slips = []
    if mixed:
        slips.append(
            (
                (2 + 2) * n + states,
                "forgot-master-weights",
                "mixed precision keeps an fp32 master copy of every weight (4 "
                "bytes) for the update; bf16 alone would round small updates away",
            )
        )
        bf16_states = (
            "optimizer state stays in fp32 (4 bytes per buffer) even in mixed precision"
        )
        if states:  # with or without the master copy; SGD has no state
            slips.append(((2 + 2) * n + states // 2, "states-in-bf16", bf16_states))
            slips.append((reference(n, optimizer, mixed) - states // 2,
                          "states-in-bf16", bf16_states))  # fmt: skip
        slips.append(
            (
                reference(n, optimizer, mixed) + 2 * n,
                "gradient-in-fp32",
                "with bf16 mixed precision the gradient is bf16 like the weight "
                "it belongs to, 2 bytes, not 4: only the master weight and the "
                "optimizer state are fp32",
            )
        )
    weights = (2 + 4) * n if mixed else 4 * n
    slips.append(
        (
            weights + states,
            "forgot-gradients",
            "backward() stores a gradient for every weight until the step reads it",
        )
    )
    one_buffer_too_many = {  # one fp32 buffer per parameter too many
        "adam": (
            "adam-three-buffers",
            "Adam keeps two fp32 buffers per parameter, exp_avg (the first "
            "moment) and exp_avg_sq (the second); the learning rate and "
            "the step count are single numbers, not a third buffer",
        ),
        "sgd": (
            "sgd-has-state",
            "plain SGD keeps no optimizer state: the update reads only the "
            "gradient; the one fp32 buffer belongs to SGD with momentum",
        ),
    }
    if optimizer in one_buffer_too_many:
        extra = reference(n, optimizer, mixed) + 4 * n
        slips.append((extra, *one_buffer_too_many[optimizer]))
    if optimizer != "sgd":
        slips.append(
            (
                reference(n, optimizer, mixed) - states,
                "forgot-optimizer-state",
                "momentum keeps one fp32 buffer per parameter and Adam two "
                "(exp_avg and exp_avg_sq)",
            )
        )
    return slips


check_case = int_compared("bytes", args=lambda case: tuple(case["args"]))
