"""An exercise compared with its reference, declared: the inputs and how to judge.

Most harnesses judged the same way: the right answer is the module's
`reference` called on the case's inputs, the known mistakes are its
`_variants` (tensors) or `_slips` (numbers) called on the same inputs, and
a shared judge compares (grading_engine.checks.judges). Each wrote the two
server-side expectations that compute them by hand; these builders write
them instead, so a harness states only what differs.

The reference and the mistakes are named, not passed: pruning (the sandbox's
stage and the learner edition, grading_engine.sandbox.pruning) keeps what
the harness's kept statements reach by name, and a name in a string reaches
nothing, so neither the reference nor the mistakes leave the server.

The expectations are bound in the harness's namespace under the names and
expectation names a written harness gave them (`expected_output` and
`known_mistakes`, or `expected`), so what the server ships to the learner's
client, and what reads them, stay the same.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from grading_engine.checks.fingerprints import computed
from grading_engine.checks.judges import CheckCase, float_check, int_check, tensor_check
from grading_engine.expected import expectation


def _call(fn: Callable, args):
    """A tuple of inputs is spread, anything else is the one argument."""
    return fn(*args) if isinstance(args, tuple) else fn(args)


def _bind(module: dict, name: str, fn: Callable, **marks) -> Callable:
    """`fn` as an expectation of the harness `module`, named and bound there
    as if the harness wrote it (its shipped values keep their key)."""
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module["__name__"]
    module[name] = expectation(fn, **marks)
    return module[name]


def tensor_compared(
    inputs: Callable[[dict], object],
    *,
    reference: str = "reference",
    mistakes: str | None = "_variants",
    as_float: bool = False,
    ships: Callable[[dict], bool] | None = None,
    **check,
) -> CheckCase:
    """tensor_check of the learner's tensor against `reference(*inputs(case))`
    (cast to float32 with `as_float`, for a reference computed in float64),
    naming the `mistakes(*inputs(case))` Variants; `ships` is the
    expectations' `when` (which cases ship values), `check` tensor_check's
    options."""
    module = sys._getframe(1).f_globals

    def expected_output(case: dict):
        """The right output (shipped for the visible cases)."""
        right = _call(module[reference], inputs(case))
        return right.float() if as_float else right

    def known_mistakes(case: dict) -> list:
        """What the known mistakes give (shipped for the visible cases)."""
        return computed(_call(module[mistakes], inputs(case)))

    expected = _bind(module, "expected_output", expected_output, when=ships)
    listed = None
    if mistakes is not None:
        listed = _bind(module, "known_mistakes", known_mistakes, when=ships)
    check_case = tensor_check(expected, listed, harness=module, **check)
    check_case.expected = expected  # for a harness's own checks around it
    return check_case


def _value_compared(module: dict, judge, what, args, reference, slips, style):
    def expected(case: dict) -> dict:
        """The answer and its known slips (shipped for the visible cases)."""
        if args is None:  # the case's args: by keyword, and whole to the slips
            given = case["args"]
            return {"value": module[reference](**given), "slips": module[slips](given)}
        given = args(case)
        return {
            "value": _call(module[reference], given),
            "slips": _call(module[slips], given),
        }

    return judge(what, _bind(module, "expected", expected), **style)


def int_compared(
    what: str,
    *,
    args: Callable[[dict], object] | None = None,
    reference: str = "reference",
    slips: str = "_slips",
) -> CheckCase:
    """int_check of the learner's int against the reference, naming the
    (value, diagnosis, message) rows the slips give. Both are called with
    `args(case)` (a tuple spread); without `args`, with the case's "args"
    dict: by keyword for the reference, whole for the slips, which read it
    by key."""
    module = sys._getframe(1).f_globals  # the declaring harness's namespace
    return _value_compared(module, int_check, what, args, reference, slips, {})


def float_compared(
    what: str,
    *,
    args: Callable[[dict], object] | None = None,
    reference: str = "reference",
    slips: str = "_slips",
    **style,
) -> CheckCase:
    """float_check's counterpart of int_compared; `style` is float_check's."""
    module = sys._getframe(1).f_globals  # the declaring harness's namespace
    return _value_compared(module, float_check, what, args, reference, slips, style)
