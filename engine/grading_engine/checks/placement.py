"""The right numbers in the wrong places: a mistake every tensor exercise can make.

A view where a transpose was needed, a loop that reads row 0 each time, a
batch index used as a position: the learner computed the right numbers and
put them in the wrong places. No exercise's list of slips foresees each
way of doing that, but the output shows it whatever the code: every row of
it is a row of the answer (rows misplaced), or it holds exactly the
answer's numbers in another order (values misplaced).

Both tests are run only on a failed value of the right shape, after the
exercise's own slips, and only where they cannot match by chance: float
tensors whose expected rows (or values) are nearly all distinct.
"""

from __future__ import annotations

import torch

from grading_engine.checks.result import CheckResult, likely_mistake
from grading_engine.checks.slip_rules import ruled_out

ROWS = "rows-misplaced"
VALUES = "values-misplaced"
DIAGNOSES = (ROWS, VALUES)
MAX_ELEMENTS = 4_000_000
MAX_ROWS = 8192


def _usable(got, expected) -> bool:
    return (
        isinstance(got, torch.Tensor)
        and got.shape == expected.shape
        and expected.is_floating_point()
        and got.is_floating_point()
        and 2 <= expected.numel() <= MAX_ELEMENTS
        and bool(torch.isfinite(expected).all())
        and bool(torch.isfinite(got).all())
    )


def _keys(rows: torch.Tensor) -> torch.Tensor:
    """One number per row (a fixed projection): equal rows, equal keys."""
    return rows @ torch.linspace(1.0, 2.0, rows.shape[1], dtype=torch.float64)


def _row_sources(got, expected, rtol: float, atol: float) -> torch.Tensor | None:
    """For each row of `got` (last axis), the index of an expected row it
    equals; None when some row is none of them, or every row is in place."""
    if expected.dim() < 2 or expected.shape[-1] < 2:
        return None
    width = expected.shape[-1]
    want = expected.reshape(-1, width).double()
    have = got.reshape(-1, width).double()
    if not 2 <= want.shape[0] <= MAX_ROWS:
        return None
    # Each row's candidate by its key; isclose confirms it.
    keys = _keys(want)
    if torch.unique(keys).numel() < 2:
        return None  # one row repeated: any arrangement of it is the answer
    mine = _keys(have)
    nearest = (mine[:, None] - keys[None, :]).abs().argmin(dim=1)
    found = torch.isclose(have, want[nearest], rtol=rtol, atol=atol).all(dim=1)
    in_place = torch.isclose(have, want, rtol=rtol, atol=atol).all(dim=1)
    return nearest if bool(found.all()) and not bool(in_place.all()) else None


def _rows_lost(sources: torch.Tensor, expected) -> bool:
    """Whether some expected rows appear more than once and others not at
    all (row 0 read every time), rather than all of them, reordered."""
    keys = _keys(expected.reshape(-1, expected.shape[-1]).double())
    return not torch.equal(torch.sort(keys).values, torch.sort(keys[sources]).values)


def _same_values(got, expected, rtol: float, atol: float) -> bool:
    flat = expected.reshape(-1).double()
    if torch.unique(flat).numel() < 0.9 * flat.numel():
        return False  # many equal values: any reordering of them would match
    mine = torch.sort(got.reshape(-1).double()).values
    theirs = torch.sort(flat).values
    return bool(torch.allclose(mine, theirs, rtol=rtol, atol=atol))


def placement_mistake(got, expected, *, rtol: float, atol: float):
    """(ROWS, each row's source) or (VALUES, None) when `got` (a failed
    answer of the right shape) is the answer's numbers in other places, else
    (None, None)."""
    if not _usable(got, expected) or torch.allclose(
        got.double(), expected.double(), rtol=rtol, atol=atol
    ):
        return None, None
    sources = _row_sources(got, expected, rtol, atol)
    if sources is not None:
        return ROWS, sources
    if _same_values(got, expected, rtol, atol):
        return VALUES, None
    return None, None


def misplaced(
    name: str, got, expected, *, rtol: float, atol: float, hidden: bool
) -> CheckResult | None:
    """The named mistake when a wrong answer is the right numbers moved."""
    kind, sources = placement_mistake(got, expected, rtol=rtol, atol=atol)
    if kind is None or ruled_out(kind):
        return None
    if kind == ROWS:
        width = expected.shape[-1]
        repeated = _rows_lost(sources, expected)
        text = (
            f"every row of {width} numbers (the last axis) you return is a row of "
            "the right answer, but not in its place"
            + (
                ", and some rows appear more than once while others are missing"
                if repeated
                else ""
            )
            + ": the rows come from the wrong index (a loop variable or a batch "
            "index used where another was meant) or a view/reshape put them in "
            "another order; a view keeps memory order, only transpose or "
            "permute moves an axis"
        )
    else:
        text = (
            "your output holds exactly the right numbers, in another order: a "
            "view or reshape where a transpose or permute was needed (a view "
            "keeps memory order and regroups it; it does not move an axis)"
        )
    return likely_mistake(name, text, diagnosis=kind, hidden=hidden)


def agrees(got, expected, diagnosis: str, *, rtol: float, atol: float):
    """Whether one case's output fits a placement mistake (checks.slip_rules):
    a right value is silent (None), a wrong one must be moved numbers."""
    if diagnosis not in DIAGNOSES or not isinstance(got, torch.Tensor):
        return None
    if got.shape == expected.shape and torch.allclose(
        got.double(), expected.double(), rtol=rtol, atol=atol, equal_nan=True
    ):
        return None
    return placement_mistake(got, expected, rtol=rtol, atol=atol)[0] == diagnosis
