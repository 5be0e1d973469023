"""The run_case of an ordinary exercise, declared: what to call the learner with.

Child side (the sandbox runs these next to the learner's code): each builder
returns a `run_case(fn, case)` that calls the learner's function on the
case's inputs and captures plain data. The judge half of a declaration is
grading_engine.checks.judges.
"""

from __future__ import annotations

from collections.abc import Callable

from grading_engine.checks.floats import capture_float
from grading_engine.checks.learner_calls import run_and_capture
from grading_engine.exercises.kit.args import call_with_args, int_result

RunCase = Callable[[Callable, dict], tuple[dict, dict]]


def calls(inputs: Callable[[dict], object]) -> RunCase:
    """Call the learner with `inputs(case)` and capture what comes back.

    A tuple is passed as the positional arguments; anything else (one
    tensor) as the only argument.
    """

    def run_case(fn, case: dict):
        args = inputs(case)
        return run_and_capture(fn, *(args if isinstance(args, tuple) else (args,)))

    return run_case


def returns_int(keys: tuple[str, ...]) -> RunCase:
    """Call with the case's args in signature order; capture an int "result"."""

    def run_case(fn, case: dict):
        return int_result(fn, case, keys)

    return run_case


def returns_float(keys: tuple[str, ...], *, ints: bool = True) -> RunCase:
    """Call with the case's args in signature order; capture a float
    (`ints=False` refuses an integer number: see capture_float)."""

    def run_case(fn, case: dict):
        return capture_float(call_with_args(fn, case, keys), ints=ints), {}

    return run_case
