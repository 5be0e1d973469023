"""embed-at-offset: embed a chunk of new tokens that starts at position `start`.

During cached generation the tokens fed to the model are not at positions
0..t-1 but at start..start+t-1, where `start` is the number of tokens
already processed. Past the position table's last row there is nothing to
look up, and the function must say so with a ValueError instead of
inventing positions.
"""

from __future__ import annotations

import random

import torch

from grader.checks.fingerprints import Variant, fingerprint
from grader.checks.result import CheckResult
from grader.checks.tensors import (
    check_no_error,
    compare_tensor,
    failed,
    run_and_capture,
)
from grader.reference import get_config
from grader.reference.cache import reference_model

SLUG = "embed-at-offset"
ENTRY_POINT = "embed_at"
SIGNATURE = "embed_at(idx, wte, wpe, start) -> Tensor"

SKY = [464, 6766, 318]  # "The sky is"
RTOL, ATOL = 1e-5, 1e-6
TOO_LONG = (
    "no-length-check",
    "the position table has only block_size rows, so positions at or past "
    "block_size do not exist: check start + t <= wpe.shape[0] and raise a "
    "ValueError that names the limit",
)
_ERRORS = [
    (
        "must match the size of tensor",
        "positions-restart-at-zero",
        "the position rows and the tokens disagree in length: slice exactly t "
        "rows of wpe, starting at `start`",
    ),
]


def _span(first: int, last: int) -> str:
    return f"position {first}" if first == last else f"positions {first}..{last}"


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "gpt2 'The sky is' after 5 cached tokens",
            "hidden": False,
            "config": "gpt2",
            "idx": [SKY],
            "start": 5,
        },
        {
            "name": "tiny, first chunk (start 0)",
            "hidden": False,
            "config": "tiny",
            "b": 2,
            "t": 4,
            "start": 0,
        },
        {
            "name": "tiny, 3 tokens at position 14 of a 16-row table",
            "hidden": False,
            "config": "tiny",
            "b": 1,
            "t": 3,
            "start": 14,
            "too_long": True,
        },
    ]
    for i in range(4):
        config = rng.choice(["tiny", "mini", "random"])
        case = {"name": f"hidden {i + 1}", "hidden": True, "config": config}
        if config == "random":
            case["sizes"] = {
                "vocab_size": rng.choice([101, 127, 173, 257]),
                "block_size": rng.choice([24, 40, 48]),
                "n_embd": rng.choice([12, 20, 36]),
            }
        block = case.get("sizes", {}).get("block_size") or get_config(config).block_size
        case["b"] = rng.randint(1, 3)
        case["t"] = rng.randint(1, 4)
        if i == 3:  # one hidden case runs past the end of the table
            case["start"] = rng.randint(block - case["t"] + 1, block)
            case["too_long"] = True
        else:
            case["start"] = rng.randint(1, block - case["t"])
        case["seed"] = rng.randrange(2**31)
        cases.append(case)
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """(idx, wte, wpe, start) for a case; the same in the child and the parent."""
    if case["config"] == "gpt2":
        model = reference_model("gpt2")
        return (
            torch.tensor(case["idx"], dtype=torch.long),
            model.transformer.wte.weight.detach(),
            model.transformer.wpe.weight.detach(),
            case["start"],
        )
    sizes = case.get("sizes") or {}
    config = get_config(
        "tiny" if case["config"] == "random" else case["config"], **sizes
    )
    g = torch.Generator().manual_seed(case.get("seed", 0))
    wte = torch.randn(config.vocab_size, config.n_embd, generator=g) * 0.5
    wpe = torch.randn(config.block_size, config.n_embd, generator=g) * 0.5
    idx = torch.randint(0, config.vocab_size, (case["b"], case["t"]), generator=g)
    return idx, wte, wpe, case["start"]


def reference(idx, wte, wpe, start):
    t = idx.shape[1]
    return wte[idx] + wpe[start : start + t]


def run_case(fn, case: dict):
    return run_and_capture(fn, *inputs(case))


def _check_refusal(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The over-long case must raise ValueError, and nothing else will do."""
    name, hidden = case["name"], bool(case["hidden"])
    idx, _, wpe, start = inputs(case)
    last = start + idx.shape[1] - 1
    error = data.get("error")
    if isinstance(error, dict) and error.get("type") == "ValueError":
        return [
            CheckResult(
                name,
                True,
                f"refused position {last} of a {wpe.shape[0]}-row table",
                hidden=hidden,
            )
        ]
    if isinstance(error, dict):
        got = f"{error.get('type')}: {str(error.get('message'))[:120]}"
        message = (
            f"the last position would be {last} but wpe has {wpe.shape[0]} rows; "
            f"you raised {got}, which looks like an accident rather than a check: "
            + TOO_LONG[1]
        )
    else:
        got = "a tensor" if "output" in tensors else "no error"
        message = (
            f"the last position would be {last} but wpe has only {wpe.shape[0]} "
            f"rows, and your function returned {got} instead of refusing. Wrapping "
            "positions around (modulo) or clamping them feeds the model vectors "
            "it learned for other places: " + TOO_LONG[1]
        )
    return [
        CheckResult(
            name,
            False,
            message,
            expected="ValueError",
            got=got,
            diagnosis=TOO_LONG[0],
            hidden=hidden,
        )
    ]


def check_case(case: dict, data: dict, tensors: dict):
    if case.get("too_long"):
        return _check_refusal(case, data, tensors)
    hidden = bool(case["hidden"])
    name = case["name"]
    raised = check_no_error(name, data.get("error"), patterns=_ERRORS, hidden=hidden)
    if raised:
        return [raised]
    idx, wte, wpe, start = inputs(case)
    expected = reference(idx, wte, wpe, start)
    got = tensors.get("output")
    t = idx.shape[1]
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "n_embd"),
        sizes={"vocab_size": wte.shape[0], "block_size": wpe.shape[0]},
        shape_hints={
            "replaced:time->block_size": (
                "position-table-not-sliced",
                "add only the t rows of wpe that belong to these tokens",
            ),
        },
        rtol=RTOL,
        atol=ATOL,
        what="the embedding",
        hidden=hidden,
    )
    if failed(results) and got is not None and got.shape == expected.shape:
        variants = [
            Variant(
                "positions-restart-at-zero",
                lambda: wte[idx] + wpe[:t],
                f"your output matches {_span(0, t - 1)}: these tokens come "
                f"after {start} cached ones, so they sit at "
                f"{_span(start, start + t - 1)}; add wpe[start:start + t]",
            ),
            Variant(
                "positions-off-by-one",
                lambda: wte[idx] + wpe[start + 1 : start + 1 + t],
                f"your output matches {_span(start + 1, start + t)}: the "
                f"first new token is at position start = {start} (it is the "
                "count of tokens before it), not start + 1",
            ),
            Variant(
                "missing-position-embedding",
                lambda: wte[idx],
                "your output matches the token embedding alone: add the "
                "position rows wpe[start:start + t]",
            ),
        ]
        match = fingerprint(
            name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
        )
        if match:
            results.append(match)
    return results
