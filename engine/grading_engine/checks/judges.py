"""The check_case of an ordinary exercise, declared: what differs, nothing else.

Parent side. A harness states its expectations (grading_engine.expected)
and how to compare; these builders return the `check_case(case, data,
tensors)` that runs the shared chain around them (a raised error, then the
answer, then the known mistakes on a wrong value). The child half of a
declaration is grading_engine.exercises.kit.runs.

A tensor check reads RTOL and ATOL from the module that declares it at
every call, not once: an exercise's own tolerances replace the harness's
module constants while it is judged (grading.tolerances).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import torch

from grading_engine.checks.answers import (
    float_answer,
    int_answer,
    not_reduced,
    tensor_answer,
)
from grading_engine.checks.fingerprints import shipped_variants
from grading_engine.checks.placement import DIAGNOSES as PLACEMENT
from grading_engine.checks.placement import agrees as placement_agrees
from grading_engine.checks.proportional import DIAGNOSES as PROPORTIONAL
from grading_engine.checks.proportional import agrees as factor_agrees
from grading_engine.checks.result import CheckResult
from grading_engine.checks.tensors import case_error
from grading_engine.checks.values import captured_int

CheckCase = Callable[[dict, dict, dict], list[CheckResult]]
Expectation = Callable[[dict], object]
# More checks after the answer's: (case, tensors, the right tensor) -> results.
After = Callable[[dict, dict, object], list[CheckResult]]


def tensor_check(
    expected: Expectation,
    mistakes: Expectation | None = None,
    *,
    errors=(),
    sizes: dict | Callable[[dict, object], dict] | None = None,
    after: After | None = None,
    harness: dict | None = None,
    **compare,
) -> CheckCase:
    """Judge the tensor the learner returned against `expected(case)`.

    `expected` gives the right tensor, or a dict whose "output" is it with
    other facts of the case (`sizes` may read them). `mistakes` gives the
    known wrong computations' outputs (fingerprints.computed), tried only
    when the value is wrong. `errors` are case_error's patterns; `sizes` is
    compare_tensor's, or a function of (case, expected(case)) giving them;
    `after` adds checks of its own (a mistake of another shape, say) when
    the function did not raise; `harness` is the declaring harness's
    namespace (by default the caller's); `compare` is the rest of
    tensor_answer's options (axes, what, hints...).
    """
    module = harness if harness is not None else sys._getframe(1).f_globals

    def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
        if raised := case_error(case, data, errors):
            return raised
        shipped = expected(case)
        want = shipped["output"] if isinstance(shipped, dict) else shipped

        def listed():  # on demand: a right answer never pays for them
            return shipped_variants(mistakes(case))

        results = tensor_answer(
            case["name"],
            data,
            tensors,
            want,
            variants=listed if mistakes is not None else (),
            sizes=sizes(case, shipped) if callable(sizes) else sizes,
            rtol=module["RTOL"],
            atol=module["ATOL"],
            hidden=bool(case["hidden"]),
            **compare,
        )
        return results + after(case, tensors, want) if after else results

    def slip_agrees(case: dict, data: dict, tensors: dict, diagnosis: str):
        """Whether the learner's tensor on this case is the mistake's
        (checks.slip_rules); None where the mistake does not apply."""
        got = tensors.get(compare.get("key", "output"))
        if diagnosis in PLACEMENT or diagnosis in PROPORTIONAL:
            if data.get("error"):
                return False  # a case that raised is not the numbers moved
            shipped = expected(case)
            want = shipped["output"] if isinstance(shipped, dict) else shipped
            generic = placement_agrees if diagnosis in PLACEMENT else factor_agrees
            rtol, atol = module["RTOL"], module["ATOL"]
            return generic(got, want, diagnosis, rtol=rtol, atol=atol)
        listed = [] if mistakes is None else shipped_variants(mistakes(case))
        variants = [v for v in listed if v.diagnosis == diagnosis]
        if not variants or data.get("error"):
            return None
        if not isinstance(got, torch.Tensor):
            return False
        for variant in variants:
            try:
                value = variant.compute()
            except Exception:  # noqa: BLE001 - the mistake does not apply here
                return None
            if value.shape == got.shape and torch.allclose(
                got.double(),
                value.double(),
                rtol=module["RTOL"],
                atol=module["ATOL"],
                equal_nan=True,
            ):
                return True
        return False

    check_case.slip_agrees = slip_agrees
    return check_case


def not_reduced_after(message: str) -> After:
    """`after` for a loss: an answer of one loss per position is named as
    not reduced, with `message` (answers.not_reduced)."""

    def after(case: dict, tensors: dict, want) -> list[CheckResult]:
        hidden = bool(case["hidden"])
        return not_reduced(
            case["name"], tensors.get("output"), want, message, hidden=hidden
        )

    return after


def int_check(what: str, expected: Expectation) -> CheckCase:
    """Judge the int "result" against `expected(case)`: {"value", "slips"}."""

    def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
        answer = expected(case)
        return int_answer(case, data, what, answer["value"], answer["slips"])

    def slip_agrees(case: dict, data: dict, tensors: dict, diagnosis: str):
        values = _slip_values(expected(case), diagnosis)
        return captured_int(data.get("result")) in values if values else None

    check_case.slip_agrees = slip_agrees
    check_case.slip_candidates = lambda case: _slip_names(expected(case))
    return check_case


def float_check(what: str, expected: Expectation, **style) -> CheckCase:
    """Judge the captured float against `expected(case)`: {"value", "slips"};
    `style` is float_close's rel_tol, spec, unit and float_hint."""

    def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
        answer = expected(case)
        return float_answer(case, data, what, answer["value"], answer["slips"], **style)

    def slip_agrees(case: dict, data: dict, tensors: dict, diagnosis: str):
        values = _slip_values(expected(case), diagnosis)
        if not values:
            return None
        got = data.get("value")
        return type(got) is float and any(
            math.isclose(got, value, rel_tol=style["rel_tol"]) for value in values
        )

    check_case.slip_agrees = slip_agrees
    check_case.slip_candidates = lambda case: _slip_names(expected(case))
    return check_case


def _slip_names(answer: dict) -> set[str]:
    """The slips listed as applying to a case (grading's tie-breaking)."""
    return {name for value, name, _ in answer["slips"] if value is not None}


def _slip_values(answer: dict, diagnosis: str) -> list:
    """What the slip named `diagnosis` gives on a case ([]: not listed there,
    or listed as not applying to it: a None value)."""
    return [
        value
        for value, name, _ in answer["slips"]
        if name == diagnosis and value is not None
    ]
