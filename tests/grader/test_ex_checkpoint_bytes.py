"""checkpoint-bytes' reference is what torch.save really writes."""

from __future__ import annotations

import io

import pytest
import torch
from grading_engine.exercises import checkpoint_bytes as ex


def saved_size(state: dict) -> int:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return len(buffer.getvalue())


@pytest.mark.parametrize("case", ex.make_cases(7)[1:], ids=lambda c: c["name"])
def test_saved_file_holds_each_storage_once(case):
    sizes = ex._sizes(ex.build(case, device="meta"))
    state = ex.build(case, device="cpu").state_dict()
    # The same keys and dtypes with no data: what the file costs beyond tensors.
    blanks: dict[int, torch.Tensor] = {}
    empty = {
        k: blanks.setdefault(
            v.untyped_storage().data_ptr(), torch.empty(0, dtype=v.dtype)
        )
        for k, v in state.items()
    }
    data = saved_size(state) - saved_size(empty)
    slack = 128 * len(state)  # per-record zip headers and 64-byte alignment
    assert abs(data - sizes["right"]) <= slack
    if sizes["every_name"] - sizes["right"] > 2 * slack:  # big enough to tell
        assert abs(data - sizes["every_name"]) > slack  # shared storages once
