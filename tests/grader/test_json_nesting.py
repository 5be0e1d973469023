"""The one bracket count both trust boundaries refuse deep JSON with."""

import json

import pytest
from grading_engine.json_nesting import json_nesting


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        (b"", 0),
        (b"42", 0),
        (b"{}", 1),
        (b'{"a": [1, {"b": []}]}', 4),
        (b'["[[[[", "}}}"]', 1),  # brackets inside strings do not count
        (rb'["a \"[[[\" b"]', 1),  # nor do they after an escaped quote
        (b"[" * 100_000, 100_000),  # malformed: counted, not parsed
    ],
)
def test_it_counts_container_nesting_outside_strings(text, depth):
    assert json_nesting(text) == depth


def test_it_agrees_with_the_parsed_structure():
    value = {"x": [[{"y": [1, 2, {"z": "]]]"}]}]]}
    assert json_nesting(json.dumps(value).encode()) == 6
