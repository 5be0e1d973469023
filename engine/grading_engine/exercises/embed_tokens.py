"""embed-tokens: token embedding plus position embedding, (b, t) -> (b, t, d).

The visible case uses GPT-2 small's tables and "The sky is"; hidden cases
draw a config, a batch and a length from the attempt seed.
"""

from __future__ import annotations

import math
import random

import torch

from grading_engine.checks.fingerprints import Variant, computed
from grading_engine.checks.judges import tensor_check
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.embeddings import draw_table, tables
from grading_engine.exercises.kit.runs import calls
from grading_engine.exercises.kit.sky import SKY
from grading_engine.expected import expectation
from grading_engine.reference.cache import reference_model

SLUG = "embed-tokens"
ENTRY_POINT = "embed"
SIGNATURE = "embed(idx, wte, wpe) -> Tensor"

RTOL, ATOL = 1e-5, 1e-6
_ERRORS = [
    (
        "must match the size of tensor",
        "position-table-not-sliced",
        "the position table has block_size rows but idx has only t columns: "
        "add wpe[:t] (or wpe[torch.arange(t)]), not the whole table",
    ),
    (
        "out of bounds",
        "positions-from-token-ids",
        "an index was out of range: look up wte with the token ids and wpe "
        "with the positions 0..t-1, never wpe with the token ids",
    ),
]


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("gpt2 'The sky is'", False, config="gpt2", idx=[SKY]),
        new_case("tiny, batch of 3", False, config="tiny", b=3, t=5),
    ]
    # Every draw has sequences well inside the table, one just short of it
    # (t = block_size - 1) and one filling it (t = block_size, the longest
    # idx the model takes): positions that start at 1 run past the last row
    # there. Tables, batches and ids stay random.
    lengths = [None, None, -1, 0]
    for i, under in enumerate(lengths):
        table, block = draw_table(rng)
        t = rng.randint(3, block - 2) if under is None else block + under
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                **table,
                b=rng.randint(2, 4),
                t=t,
                seed=rng.randrange(2**31),
            )
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(idx, wte, wpe) for a case; the same in the child and the parent."""
    return tables(case)


def reference(idx, wte, wpe):
    return wte[idx] + wpe[: idx.shape[1]]


run_case = calls(inputs)


def _variants(idx, wte, wpe) -> list[Variant]:
    t = idx.shape[1]
    return [
        Variant("missing-position-embedding", lambda: wte[idx]),
        Variant(
            "scaled-embedding",
            lambda: wte[idx] * math.sqrt(wte.shape[1]) + wpe[:t],
            "your output matches the token embedding multiplied by "
            "sqrt(n_embd), as in the original Transformer paper: GPT-2 adds "
            "wte[idx] + wpe[:t] with no scaling",
        ),
        Variant(
            "positions-off-by-one",
            lambda: wte[idx] + wpe[1 : t + 1],
            "your output matches positions 1..t: positions start at 0, so add wpe[:t]",
        ),
        Variant(
            "positions-from-wte",
            lambda: wte[idx] + wte[:t],
            "your output matches position vectors taken from the token table, "
            "wte[0..t-1]: the positions index the position table, "
            "so add wpe[:t]",
        ),
        Variant(
            "positions-along-batch",
            lambda: wte[idx] + wpe[: idx.shape[0]].unsqueeze(1),
            "your output matches one position row per SEQUENCE (wpe[:b], "
            "broadcast over its tokens): positions run along the time axis, "
            "so token j of every sequence gets wpe[j], rows 0..t-1",
        ),
    ]


def _full_table_errors(block: int) -> list[tuple[str, str, str]]:
    """What an error means when idx fills the whole table (t = block_size)."""
    past = (
        "positions-off-by-one",
        f"this idx fills the whole context (t = block_size = {block}), so its "
        f"positions are 0..{block - 1}, every row of wpe: positions counted "
        f"from 1 reach {block}, one past the last row. Positions start at 0",
    )
    return [
        (f"index {block} is out of bounds", *past),
        ("must match the size of tensor", *past),
        *_ERRORS,
    ]


@expectation
def expected_output(case: dict) -> dict:
    """The right output and the tables' sizes (shipped for the visible cases)."""
    idx, wte, wpe = inputs(case)
    return {
        "output": reference(idx, wte, wpe),
        "t": idx.shape[1],
        "vocab_size": wte.shape[0],
        "block_size": wpe.shape[0],
    }


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    return computed(_variants(*inputs(case)))


def _sizes(case: dict, shipped: dict) -> dict:
    """The tables' sizes, so a shape that took a table's is named."""
    return {"vocab_size": shipped["vocab_size"], "block_size": shipped["block_size"]}


_declared = tensor_check(
    expected_output,
    known_mistakes,
    sizes=_sizes,
    axes=("batch", "time", "n_embd"),
    shape_hints={
        "missing:batch": (None, "index wte with the whole (b, t) idx"),
        "replaced:time->block_size": (
            "position-table-not-sliced",
            "add only the first t rows of wpe",
        ),
    },
    what="the embedding",
)


def check_case(case: dict, data: dict, tensors: dict):
    """The known errors depend on the case (when idx fills the table, an
    index error means positions counted from 1), so they are read here,
    before the declared check."""
    shipped = expected_output(case)
    block = shipped["block_size"]
    errors = _full_table_errors(block) if shipped["t"] == block else _ERRORS
    return case_error(case, data, errors) or _declared(case, data, tensors)
