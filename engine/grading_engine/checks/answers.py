"""One case's answer judged end to end: the chains every harness used to spell out.

A harness names what is specific to its exercise (the expected value, its
slips or known wrong computations, its hints); these functions run the
shared steps around them. Parent side only: the staged sandbox copy drops
this module's functions, since no `run_case` reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from grading_engine.checks.fingerprints import Variant, fingerprint
from grading_engine.checks.floats import Slips, float_close
from grading_engine.checks.in_place import input_changes
from grading_engine.checks.result import CheckResult, likely_mistake
from grading_engine.checks.slip_rules import ruled_out
from grading_engine.checks.tensors import compare_tensor, failed
from grading_engine.checks.values import exact_int, slip_diagnosis

Variants = Sequence[Variant] | Callable[[], Sequence[Variant]]


def int_answer(
    case: dict, data: dict, what: str, expected: int, slips=()
) -> list[CheckResult]:
    """The exact int a value exercise captured as "result", with its slips."""
    return [
        exact_int(
            f"{case['name']}: {what}",
            data.get("result"),
            expected,
            hidden=case["hidden"],
            diagnose=slip_diagnosis(slips),
        )
    ]


def float_answer(
    case: dict, data: dict, what: str, expected: float, slips: Slips, **style
) -> list[CheckResult]:
    """The float a value exercise captured with `capture_float`, with its slips.

    `style` is float_close's rel_tol, spec, unit and float_hint.
    """
    name = f"{case['name']}: {what}"
    return [
        float_close(name, data, expected, slips, hidden=bool(case["hidden"]), **style)
    ]


def finite_answer(got: torch.Tensor) -> bool:
    """False for a float tensor holding NaN or inf (check_finite named it)."""
    return not (got.is_floating_point() and not torch.isfinite(got).all())


def tensor_answer(
    name: str,
    data: dict,
    tensors: dict,
    expected: torch.Tensor,
    *,
    variants: Variants = (),
    when: Callable[[torch.Tensor], bool] | None = None,
    key: str = "output",
    mistake_name: str | None = None,
    nan_agrees: bool = False,
    check_inputs: bool = True,
    rtol: float,
    atol: float,
    hidden: bool,
    **compare,
) -> list[CheckResult]:
    """compare_tensor on `tensors[key]`, then name the mistake behind a wrong value.

    The known wrong computations (`variants`, or a function that lists them
    on demand) are tried only when the values are wrong at the right shape
    and `when(got)` agrees (`nan_agrees`: see fingerprint). `compare` is
    compare_tensor's axes, sizes, hints and wording; rtol and atol are
    passed at call time, so an exercise's overrides of its harness's
    RTOL/ATOL reach both steps. An argument the learner's function changed
    in place fails a check of its own (see input_changes), whatever the
    values; a harness that judges several outputs of one call asks for
    that once (`check_inputs` on the first).
    """
    got = tensors.get(key)
    changed = input_changes(name, data, hidden=hidden) if check_inputs else []
    results = changed + compare_tensor(
        name,
        data.get(key),
        got,
        expected,
        rtol=rtol,
        atol=atol,
        hidden=hidden,
        **compare,
    )
    if not failed(results[len(changed) :]):
        return results
    if got is None or got.shape != expected.shape:
        return results
    if when is not None and not when(got):
        return results
    listed = variants() if callable(variants) else variants
    match = fingerprint(
        mistake_name or name,
        got,
        expected,
        listed,
        rtol=rtol,
        atol=atol,
        hidden=hidden,
        nan_agrees=nan_agrees,
    )
    return results + [match] if match else results


def wrong_shape_mistake(
    name: str,
    got,
    expected_shape: Sequence[int],
    variants: Sequence[Variant],
    *,
    hidden: bool,
    rtol: float = 0.0,
    atol: float = 0.0,
) -> list[CheckResult]:
    """[the named mistake] when an answer of the wrong shape IS a known wrong
    answer (exactly, or to rtol/atol with the same dtype), else [].

    compare_tensor names no mistake for sizes that no permute explains, so a
    harness whose known slips change the shape (a sum over heads, a split
    given a size for a count) lists them here, next to tensor_answer.
    """
    if not isinstance(got, torch.Tensor) or tuple(got.shape) == tuple(expected_shape):
        return []
    for variant in variants:
        if ruled_out(variant.diagnosis):  # another case contradicts it
            continue
        value = variant.compute()
        if value.shape != got.shape:
            continue
        if rtol == atol == 0:
            same = torch.equal(got, value)
        else:
            same = got.dtype == value.dtype and torch.allclose(
                got, value, rtol=rtol, atol=atol
            )
        if same:
            return [
                likely_mistake(
                    name, variant.text(), diagnosis=variant.diagnosis, hidden=hidden
                )
            ]
    return []


def not_reduced(
    name: str, got, expected: torch.Tensor, message: str, *, hidden: bool
) -> list[CheckResult]:
    """A loss returned per position: the usual reason its shape is wrong."""
    if got is None or got.shape == expected.shape or got.numel() <= 1:
        return []
    return [likely_mistake(name, message, diagnosis="not-reduced", hidden=hidden)]
