"""train-hours: wall-clock hours to train on a token budget at a given MFU.

Training costs about 6 FLOPs per parameter per token (forward 2, backward 4).
The GPUs deliver n_gpus x peak x MFU of those per second, so the hours are
6·N·D / (n_gpus · peak · MFU) / 3600. The usual slips are off by a clean
factor (3, 100, 3600, n_gpus, 1/MFU), which is how they are recognised.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import float_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.gpus import PEAKS, on_many_gpus
from grading_engine.exercises.kit.runs import returns_float

SLUG = "train-hours"
ENTRY_POINT = "train_hours"
SIGNATURE = "train_hours(n_params, n_tokens, peak_flops, mfu, n_gpus) -> float"
_ARGS = ("n_params", "n_tokens", "peak_flops", "mfu", "n_gpus")

REL_TOL = 1e-9


def reference(n_params, n_tokens, peak_flops, mfu, n_gpus) -> float:
    return 6 * n_params * n_tokens / (n_gpus * peak_flops * mfu) / 3600


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    small = 124_439_808
    cases = [
        _case("GPT-2 small, 10B tokens, one A100 at 40% MFU", False,
              n_params=small, n_tokens=10_000_000_000, peak_flops=PEAKS["A100"],
              mfu=0.4, n_gpus=1),
        _case("GPT-2 small, 10B tokens, 8 H100s at 35% MFU", False,
              n_params=small, n_tokens=10_000_000_000,
              peak_flops=PEAKS["H100 SXM"], mfu=0.35, n_gpus=8),
        _case("GPT-2 xl, 30B tokens, 64 A100s at 45% MFU", True,
              n_params=1_557_611_200, n_tokens=30_000_000_000,
              peak_flops=PEAKS["A100"], mfu=0.45, n_gpus=64),
    ]  # fmt: skip
    for i in range(4):
        gpu = rng.choice(sorted(PEAKS))
        cases.append(
            _case(
                f"random run {i + 1} on {gpu}",
                True,
                n_params=rng.randint(10_000_000, 70_000_000_000),
                n_tokens=rng.randint(1, 2000) * 1_000_000_000,
                peak_flops=PEAKS[gpu],
                mfu=rng.randint(12, 62) / 100,
                n_gpus=rng.choice([2, 4, 8, 16, 32, 128, 512]),
            )
        )
    return cases


run_case = returns_float(_ARGS)


def _slips(args: dict) -> list[tuple[float, str, str]]:
    right = reference(**args)
    return [
        (
            right / 3,
            "forgot-backward",
            "2N FLOPs per token is the forward pass only; training also runs "
            "the backward pass, twice the forward, so use 6·N per token",
        ),
        (
            right * 4 / 3,
            "counted-recompute",
            "8·N FLOPs per token adds a second forward pass (2N), as "
            "activation recomputation runs: those are hardware FLOPs, not the "
            "model's. Count 6·N per token (forward 2N, backward 4N)",
        ),
        (
            right * 100,
            "mfu-as-percent",
            "mfu is already a fraction (0.4 means 40%); dividing it by 100 "
            "makes the run 100 times longer",
        ),
        (
            right * args["mfu"],
            "forgot-mfu",
            "that is the time at 100% of peak; real training reaches only the "
            "fraction mfu of it, so divide by mfu",
        ),
        (
            right * args["mfu"] ** 2,
            "mfu-multiplied",
            "that multiplies by mfu where it should divide: the run achieves "
            "only the fraction mfu of the peak, so it takes 1/mfu times "
            "LONGER than at peak, total FLOPs / (n_gpus · peak · mfu)",
        ),
        (
            right * 60,
            "minutes-not-hours",
            "that is in minutes; divide the seconds by 3,600 for hours",
        ),
        (
            right * 3600,
            "seconds-not-hours",
            "that is in seconds; divide by 3,600 for hours",
        ),
        *on_many_gpus(
            args,
            (
                right * args["n_gpus"],
                "forgot-gpus",
                "that is the time on one GPU; n_gpus GPUs share the work, so "
                "divide by n_gpus",
            ),
        ),
    ]


check_case = float_compared("hours", rel_tol=REL_TOL, unit="hours")
