"""embed-at-offset: embed a chunk of new tokens that starts at position `start`.

During cached generation the tokens fed to the model are not at positions
0..t-1 but at start..start+t-1, where `start` is the number of tokens
already processed. Past the position table's last row there is nothing to
look up, and the function must say so with a ValueError instead of
inventing positions. One hidden case has fixed values in every draw: 3
tokens at position 13 of a 16-row table (the last one on its last row).
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.compared import tensor_compared
from grading_engine.checks.fingerprints import Variant
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import raised
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.embeddings import draw_table, tables
from grading_engine.exercises.kit.runs import calls
from grading_engine.exercises.kit.sky import SKY
from grading_engine.expected import expectation
from grading_engine.reference.cache import reference_model

SLUG = "embed-at-offset"
ENTRY_POINT = "embed_at"
SIGNATURE = "embed_at(idx, wte, wpe, start) -> Tensor"

RTOL, ATOL = 1e-5, 1e-6
TOO_LONG = (
    "no-length-check",
    "the position table has only block_size rows, so positions at or past "
    "block_size do not exist: check start + t <= wpe.shape[0] and raise a "
    "ValueError that names the limit",
)
REFUSED_A_FIT = (
    "length-check-off-by-one",
    "the chunk's last position is start + t - 1, and a table of block_size "
    "rows has positions 0..block_size - 1: a chunk whose last token lands on "
    "the last row fits. Refuse only when start + t > wpe.shape[0]",
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
        new_case(
            "gpt2 'The sky is' after 5 cached tokens",
            False,
            config="gpt2",
            idx=[SKY],
            start=5,
        ),
        new_case(
            "tiny, first chunk (start 0)", False, config="tiny", b=2, t=4, start=0
        ),
        new_case(
            "tiny, 3 tokens at position 14 of a 16-row table",
            False,
            config="tiny",
            b=1,
            t=3,
            start=14,
            too_long=True,
        ),
    ]
    # Every draw has a chunk inside the table, one ending just below, one
    # exactly on and one just past its last row, and one past it by a random
    # amount: an off-by-one in the limit check is caught on every attempt,
    # not by luck. Tables, chunk lengths and ids stay random.
    ends = [
        ("inside the table", None),
        ("ending just below the last row", -1),
        ("ending on the last row", 0),
        ("ending one past the last row", 1),
        ("running further past the last row", None),
    ]
    for i, (where, over) in enumerate(ends):
        table, block = draw_table(rng)
        case = new_case(f"hidden {i + 1}: {where}", True, **table)
        t = case["t"] = rng.randint(1, 4)
        case["b"] = rng.randint(1, 3)
        if over is not None:  # the chunk's last position is block - 1 + over
            case["start"] = block + over - t
        elif i == 0:
            case["start"] = rng.randint(1, block - t - 2)
        else:
            case["start"] = rng.randint(block - t + 2, block + 1)
        case["too_long"] = case["start"] + t > block
        case["seed"] = rng.randrange(2**31)
        cases.append(case)
    # The same values in every draw: a chunk whose last token lands on the
    # last row, which a limit check off by one (start + t >= rows) refuses.
    cases.append(
        new_case(
            "hidden: tiny, 3 tokens ending on the last row of a 16-row table",
            True,
            config="tiny",
            b=2,
            t=3,
            start=13,
            too_long=False,
            seed=1613,
        )
    )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """(idx, wte, wpe, start) for a case; the same in the child and the parent."""
    return (*tables(case), case["start"])


def reference(idx, wte, wpe, start):
    t = idx.shape[1]
    return wte[idx] + wpe[start : start + t]


run_case = calls(inputs)


@expectation
def table_sizes(case: dict) -> dict:
    """t, and the rows of wte and wpe (shipped for the visible cases)."""
    idx, wte, wpe, _ = inputs(case)
    return {"t": idx.shape[1], "vocab_size": wte.shape[0], "rows": wpe.shape[0]}


def _fits(case: dict) -> bool:
    return not case.get("too_long")


def _check_refusal(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The over-long case must raise ValueError, and nothing else will do."""
    name, hidden = case["name"], bool(case["hidden"])
    sizes, start = table_sizes(case), case["start"]
    last = start + sizes["t"] - 1
    rows = sizes["rows"]
    error = data.get("error")
    if raised(error, "ValueError"):  # a subclass of it is one too
        return [
            CheckResult(
                name,
                True,
                f"refused position {last} of a {rows}-row table",
                hidden=hidden,
            )
        ]
    if isinstance(error, dict):
        got = f"{error.get('type')}: {str(error.get('message'))[:120]}"
        message = (
            f"the last position would be {last} but wpe has {rows} rows; "
            f"you raised {got}, which looks like an accident rather than a check: "
            + TOO_LONG[1]
        )
    else:
        got = "a tensor" if "output" in tensors else "no error"
        message = (
            f"the last position would be {last} but wpe has only {rows} "
            f"rows, and your function returned {got} instead of refusing. Wrapping "
            "positions around (modulo) or clamping them feeds the model vectors "
            "it learned for other places: " + TOO_LONG[1]
        )
    if last == rows:  # the boundary: one past the last row
        message += (
            f". This chunk ends exactly one past the table (its last row is "
            f"{rows - 1}): a limit check off by one, such as "
            "start + t - 1 > block_size, lets it through"
        )
    return [
        fail(
            name,
            message,
            expected="ValueError",
            got=got,
            diagnosis=TOO_LONG[0],
            hidden=hidden,
        )
    ]


def _variants(idx, wte, wpe, start) -> list[Variant]:
    t = idx.shape[1]
    return [
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
            "positions-not-advanced",
            lambda: wte[idx] + wpe[start],
            f"your output matches every token given the one position row "
            f"wpe[{start}]: the tokens of the chunk sit at consecutive positions "
            f"{_span(start, start + t - 1)}, so add wpe[start:start + t] (one "
            "row per token)",
        ),
        Variant(
            "missing-position-embedding",
            lambda: wte[idx],
            "your output matches the token embedding alone: add the "
            "position rows wpe[start:start + t]",
        ),
    ]


def _refused_a_fit(case: dict, data: dict) -> list[CheckResult]:
    """[the failed check] when a chunk that fits the table was refused."""
    if not raised(data.get("error"), "ValueError"):
        return []
    sizes, start = table_sizes(case), case["start"]
    last, rows = start + sizes["t"] - 1, sizes["rows"]
    return [
        fail(
            case["name"],
            f"you raised ValueError for positions {start}..{last}, but wpe has "
            f"{rows} rows (positions 0..{rows - 1}): " + REFUSED_A_FIT[1],
            expected="the embedding",
            got="ValueError",
            diagnosis=REFUSED_A_FIT[0],
            hidden=bool(case["hidden"]),
        )
    ]


def _sizes(case: dict, expected: torch.Tensor) -> dict:
    """The tables' sizes, so a shape that took a table's is named."""
    sizes = table_sizes(case)
    return {"vocab_size": sizes["vocab_size"], "block_size": sizes["rows"]}


_declared = tensor_compared(
    inputs,
    ships=_fits,
    errors=_ERRORS,
    sizes=_sizes,
    axes=("batch", "time", "n_embd"),
    shape_hints={
        "replaced:time->block_size": (
            "position-table-not-sliced",
            "add only the t rows of wpe that belong to these tokens",
        ),
    },
    what="the embedding",
)


def check_case(case: dict, data: dict, tensors: dict):
    """A chunk past the table must be refused and one that fits must not:
    judged here, around the declared check of the embedding."""
    if case.get("too_long"):
        return _check_refusal(case, data, tensors)
    return _refused_a_fit(case, data) or _declared(case, data, tensors)
