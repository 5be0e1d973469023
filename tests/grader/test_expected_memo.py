"""Within one case's check an expectation (or a `per_case` helper) is
computed once, as the checks shared one computation before the expectations
were split out for the learner's client; outside a check (the child's
run_case, which hands inputs to learner code that may change them) every
call computes anew."""

from __future__ import annotations

from grading_engine.expected import expectation, one_check, per_case

calls: list[str] = []


@per_case
def built(case: dict) -> list:
    calls.append("built")
    return [case["n"]]


@expectation(keys=lambda case: ["a", "b"])
def value(case: dict, key: str) -> int:
    calls.append(key)
    return built(case)[0] * (2 if key == "a" else 3)


def test_each_is_computed_once_per_case_within_a_check():
    calls.clear()
    first, second = {"name": "one", "n": 5}, {"name": "two", "n": 7}
    with one_check():
        assert [value(first, "a"), value(first, "a"), value(first, "b")] == [10, 10, 15]
        assert value(second, "a") == 14
    assert calls == ["a", "built", "b", "a", "built"]


def test_outside_a_check_every_call_computes_anew():
    calls.clear()
    case = {"name": "one", "n": 5}
    assert built(case) is not built(case)
    with one_check():
        assert built(case) is built(case)
    with one_check():
        assert built(case) == [5]  # a new check starts afresh
    assert calls == ["built", "built", "built", "built"]
