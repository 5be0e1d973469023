"""mfu-from-throughput: model FLOPs utilisation read off a training log.

A run that processes tokens_per_s tokens per second does about 6N FLOPs per
token (forward 2N, backward 4N); MFU is that achieved rate over the peak of
all the GPUs: tokens_per_s · 6N / (n_gpus · peak). Slips are off by a clean
factor (3, 100, n_gpus) or invert the ratio, which is how they are named.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import float_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.gpus import PEAKS, on_many_gpus
from grading_engine.exercises.kit.runs import returns_float

SLUG = "mfu-from-throughput"
ENTRY_POINT = "mfu_from_throughput"
SIGNATURE = "mfu_from_throughput(tokens_per_s, n_params, peak_flops, n_gpus) -> float"
_ARGS = ("tokens_per_s", "n_params", "peak_flops", "n_gpus")

REL_TOL = 1e-9


def reference(tokens_per_s, n_params, peak_flops, n_gpus) -> float:
    return tokens_per_s * 6 * n_params / (n_gpus * peak_flops)


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    small = 124_439_808
    cases = [
        _case("GPT-2 small, one A100, 100,000 tokens/s", False,
              tokens_per_s=100_000.0, n_params=small, peak_flops=PEAKS["A100"],
              n_gpus=1),
        _case("nanoGPT's GPT-2 small batch at 0.6 s per step, 8 A100s", False,
              tokens_per_s=491_520 / 0.6, n_params=small,
              peak_flops=PEAKS["A100"], n_gpus=8),
    ]  # fmt: skip
    for i in range(4):
        gpu = rng.choice(sorted(PEAKS))
        n_gpus = rng.choice([2, 4, 8, 16, 64, 256])
        n_params = rng.randint(50_000_000, 70_000_000_000)
        mfu = rng.randint(15, 60) / 100  # a plausible run; the learner sees tokens/s
        tokens_per_s = mfu * n_gpus * PEAKS[gpu] / (6 * n_params)
        cases.append(
            _case(
                f"random run {i + 1} on {n_gpus} x {gpu}",
                True,
                tokens_per_s=tokens_per_s,
                n_params=n_params,
                peak_flops=PEAKS[gpu],
                n_gpus=n_gpus,
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
            "a training token costs 6·N FLOPs (forward 2N, backward 4N), not 2N",
        ),
        (
            right * 4 / 3,
            "counted-recompute",
            "8·N FLOPs per token adds a second forward pass (2N), as "
            "activation recomputation runs: that is hardware FLOPs "
            "utilisation (HFU). MFU counts the model's 6·N per token",
        ),
        (
            right * 100,
            "percent-not-fraction",
            "that is a percentage; return the fraction (0.4 for 40%)",
        ),
        (
            1 / right,
            "inverted-ratio",
            "that is peak over achieved; MFU is achieved FLOP/s divided by peak",
        ),
        *on_many_gpus(
            args,
            (
                right * args["n_gpus"],
                "forgot-gpus",
                "the log's tokens/s is the whole run's; divide by the peak of all "
                "n_gpus GPUs, not one",
            ),
        ),
        *on_many_gpus(
            args,
            (
                right / args["n_gpus"],
                "divided-by-gpus-twice",
                "that divides by n_gpus twice: per GPU, tokens_per_s / n_gpus "
                "over one GPU's peak, or the whole run's tokens_per_s over all "
                "n_gpus peaks, not both",
            ),
        ),
    ]


check_case = float_compared("MFU", rel_tol=REL_TOL, unit="MFU")
