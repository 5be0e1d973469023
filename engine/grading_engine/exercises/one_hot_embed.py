"""one-hot-embed: an embedding lookup written as one_hot(idx) @ weight.

Selecting row i of W is the same as multiplying W by the i-th basis vector;
this exercise makes that explicit. Cases keep the largest id below V - 1 so
a one-hot sized by the batch's largest id cannot pass by luck, except one
hidden case that holds the edge ids 0, V - 2 and V - 1; one hidden case uses
float64 weights so a hard-coded .float() shows, and "hidden float64, fixed"
does too with values that no draw changes. A one-hot whose columns are
off by one (arange(1, V + 1)) picks each id's neighbouring row, and a zero
row for the id that falls off the edge: a known mistake, named.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

import torch

from grading_engine.checks.fingerprints import Variant, computed
from grading_engine.checks.judges import tensor_check
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import check_no_error, failed
from grading_engine.exercises.kit.runs import calls
from grading_engine.exercises.kit.sky import SKY, gpt2_tables
from grading_engine.expected import expectation
from grading_engine.reference.cache import reference_model

SLUG = "one-hot-embed"
ENTRY_POINT = "one_hot_embed"
SIGNATURE = "one_hot_embed(idx, weight) -> Tensor"

RTOL, ATOL = 1e-5, 1e-6
_SHAPES = re.compile(r"\((\d+)x(\d+) and (\d+)x(\d+)\)")


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "gpt2 'The sky is'", "hidden": False, "gpt2": True},
        {"name": "V=97, d=16", "hidden": False, "V": 97, "d": 16, "b": 3, "t": 5},
    ]
    for i, dtype in enumerate(["float32", "float64", "float32", "float32"]):
        cases.append(
            {
                "name": f"hidden {i + 1}",
                "hidden": True,
                "V": rng.choice([53, 89, 131, 211, 257]),
                "d": rng.choice([8, 12, 24, 40]),
                "b": rng.randint(2, 4),
                "t": rng.randint(3, 9),
                "dtype": dtype,
                "seed": rng.randrange(2**31),
            }
        )
    # The last: ids on the vocabulary's edges, the last row V - 1, the one
    # just below it and row 0, whatever the draw.
    cases[-1]["name"] += ": ids 0, V - 2 and V - 1"
    cases[-1]["edges"] = True
    # float64 weights with values no draw changes: a hard-coded .float() fails
    # in every grade, not only in the draw of "hidden 2".
    cases.append(
        {
            "name": "hidden float64, fixed",
            "hidden": True,
            "V": 53,
            "d": 8,
            "b": 2,
            "t": 3,
            "dtype": "float64",
            "seed": 5300,
        }
    )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    if case.get("gpt2"):
        return torch.tensor([SKY], dtype=torch.long), gpt2_tables()[0]
    g = torch.Generator().manual_seed(case.get("seed", 0))
    dtype = getattr(torch, case.get("dtype", "float32"))
    weight = torch.randn(case["V"], case["d"], generator=g, dtype=torch.float64)
    # Ids below V - 1: F.one_hot(idx) without num_classes must not fit by luck.
    idx = torch.randint(0, case["V"] - 1, (case["b"], case["t"]), generator=g)
    if case.get("edges"):  # the first and last rows of the table
        idx[0, :3] = torch.tensor([case["V"] - 1, 0, case["V"] - 2])
    return idx, weight.to(dtype)


run_case = calls(inputs)


def _explain_error(name: str, error: dict, vocab: int, hidden: bool) -> CheckResult:
    """Tell the two usual matmul errors apart by the shapes in the message."""
    result = check_no_error(name, error, hidden=hidden)
    text = str(error.get("message", "")) if isinstance(error, dict) else ""
    diagnosis, hint = None, ""
    shapes = _SHAPES.search(text)
    if "cannot be multiplied" in text and shapes:
        cols, rows = int(shapes.group(2)), int(shapes.group(3))
        if rows == vocab and cols < vocab:
            diagnosis = "one-hot-num-classes"
            hint = (
                f"your one-hot has {cols} columns, the table {vocab} rows: "
                "F.one_hot(idx) sizes it by the largest id in this batch, so "
                "pass num_classes=weight.shape[0]"
            )
        elif cols == vocab:
            diagnosis = "transposed-weight"
            hint = (
                "weight is already (V, d): multiply by weight, not weight.T "
                "(F.linear(x, weight) computes x @ weight.T, for nn.Linear's "
                "(out, in) layout)"
            )
    elif "class values must be smaller than num_classes" in text.lower():
        diagnosis = "one-hot-num-classes"
        hint = (
            f"an id is at least your num_classes: the one-hot needs one column "
            f"per token of the vocabulary, num_classes=weight.shape[0] "
            f"({vocab}, the rows of the table); weight.shape[1] is n_embd"
        )
    elif "same dtype" in text or "expected scalar type" in text:
        diagnosis = "one-hot-dtype"
        hint = (
            "F.one_hot returns int64 and a matmul needs one dtype: cast the "
            "one-hot with .to(weight.dtype) (a hard-coded .float() breaks for "
            "float64 weights)"
        )
    if diagnosis is None:
        return result
    return fail(
        result.name,
        f"{result.message} \u2014 {hint}",
        got=result.got,
        diagnosis=diagnosis,
        hidden=hidden,
    )


@expectation
def expected_output(case: dict) -> dict:
    """The right output and the vocabulary's size (shipped for the visible
    cases)."""
    idx, weight = inputs(case)
    return {"output": weight[idx], "vocab_size": weight.shape[0]}


def _shifted_rows(idx: torch.Tensor, weight: torch.Tensor, k: int) -> torch.Tensor:
    """What a one-hot whose column j stands for token j + k gives: row
    idx - k of weight, and zeros where that row does not exist (the id
    matched no column)."""
    rows = idx - k
    inside = (rows >= 0) & (rows < weight.shape[0])
    out = weight[rows.clamp(0, weight.shape[0] - 1)]
    return out * inside.unsqueeze(-1).to(weight.dtype)


@expectation
def known_mistakes(case: dict) -> list:
    """What the known mistakes give (shipped for the visible cases)."""
    idx, weight = inputs(case)
    why = (
        "your one-hot's columns are off by one (column j stands for token "
        "j {sign} 1), so each id picks the row {where} its own, and an id that "
        "matches no column gets zeros: column j must stand for token j, "
        "compare idx with arange(V) (0 .. V - 1)"
    )
    return computed(
        Variant(
            "one-hot-off-by-one",
            lambda k=k: _shifted_rows(idx, weight, k),
            why.format(sign="+" if k > 0 else "-", where=where),
        )
        for k, where in ((1, "before"), (-1, "after"))
    )


def _sizes(case: dict, shipped: dict) -> dict:
    """The vocabulary's size, to name a one-hot returned as the output."""
    return {"vocab_size": shipped["vocab_size"]}


_declared = tensor_check(
    expected_output,
    known_mistakes,
    axes=("batch", "time", "n_embd"),
    sizes=_sizes,
    shape_hints={
        "replaced:n_embd->vocab_size": (
            "missing-matmul",
            "that is the one-hot itself: multiply it by weight",
        ),
    },
    what="the embedding",
    dtype_hint="cast the one-hot to weight.dtype, not to a fixed dtype",
)


def check_case(case: dict, data: dict, tensors: dict):
    """The declared chain, with this exercise's own reading of a raised
    error (the shapes in its message) and of a wrong dtype."""
    hidden, name = bool(case["hidden"]), case["name"]
    shipped = expected_output(case)
    if data.get("error"):
        return [_explain_error(name, data["error"], shipped["vocab_size"], hidden)]
    results = _declared(case, data, tensors)
    got = tensors.get("output")
    if failed(results) and got is not None and got.dtype != shipped["output"].dtype:
        # A hard-coded .float() is this exercise's dtype mistake: name it so.
        results = [
            replace(r, diagnosis="one-hot-dtype") if r.diagnosis == "wrong-dtype" else r
            for r in results
        ]
    return results
