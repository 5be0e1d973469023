"""Tensor checks: what came back, its dtype, finiteness and closeness.

Parent side: the `check_*` functions run in the trusted parent on tensors
that came through safetensors (the child captured them with
grading_engine.checks.learner_calls), and write messages a learner can act
on: where the worst element is, how far off it is, and what usually causes
it.
"""

from __future__ import annotations

import itertools

import torch

from grading_engine.checks.learner_calls import safe_str
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.shapes import check_shape, fmt_shape
from grading_engine.checks.shapes import label as axis_label


def raised(error, kind: str) -> bool:
    """Did the learner's function raise `kind` (a built-in exception's name)
    or a subclass of it? `error` is call_learner's record."""
    if not isinstance(error, dict):
        return False
    kinds = error.get("kinds")
    named = kinds if isinstance(kinds, list) else []
    return error.get("type") == kind or kind in named


def case_error(case: dict, data: dict, patterns=()) -> list[CheckResult]:
    """[the failed check] when the learner's function raised, else []."""
    raised = check_no_error(
        case["name"], data.get("error"), patterns=patterns, hidden=bool(case["hidden"])
    )
    return [raised] if raised else []


def missing_parts(
    name: str, data: dict, count: int, message: str, *, hidden: bool
) -> list[CheckResult]:
    """[a failed check] unless a tuple of `count` parts came back (see
    capture_parts); `message` names what did through "{kind}"."""
    if data.get("length") == count:
        return []
    kind = (data.get("kind") or {}).get("type", "?")
    return [fail(name, message.format(kind=kind), hidden=hidden)]


def check_no_error(
    name: str,
    error: dict | None,
    *,
    patterns: list[tuple[str, str | None, str]] = (),
    hidden: bool = False,
) -> CheckResult | None:
    """A failed check for an exception the learner's function raised.

    `patterns` are (substring of the message, diagnosis, explanation) for
    errors an exercise knows the cause of.
    """
    if not error:
        return None
    if not isinstance(error, dict):  # forged or malformed: still a failure
        error = {"type": "Error", "message": safe_str(error)}
    kind = safe_str(error.get("type"))
    text = safe_str(error.get("message"))
    line = error.get("line")
    where = f" (line {line})" if type(line) is int else ""
    message = f"your function raised {kind}{where}: {text}"
    diagnosis = None
    for needle, pattern_diagnosis, explanation in patterns:
        if needle.lower() in text.lower():
            message += f" \u2014 {explanation}"
            diagnosis = pattern_diagnosis
            break
    return CheckResult(
        name=name,
        passed=False,
        message=message,
        got=f"{kind}: {text}"[:200],
        diagnosis=diagnosis,
        hidden=hidden,
    )


def check_is_tensor(
    name: str, info: dict | None, tensor, *, what: str = "a tensor", hidden=False
) -> CheckResult | None:
    """None when a tensor arrived, else a failed check naming what did."""
    if isinstance(tensor, torch.Tensor):
        return None
    info = info if isinstance(info, dict) else {}
    got = safe_str(info.get("type", "nothing"))
    dtype = info.get("dtype")
    if dtype:
        message = f"returned a tensor of dtype {safe_str(dtype)}; return {what}"
    elif got in ("builtins.NoneType", "nothing"):
        message = f"returned None: did you forget the return statement? Return {what}"
    else:
        message = f"returned a {got}, expected {what} (a torch.Tensor)"
    return CheckResult(name=name, passed=False, message=message, got=got, hidden=hidden)


def check_dtype(
    name: str, got: torch.Tensor, expected: torch.dtype, *, hint: str = "", hidden=False
) -> CheckResult:
    if got.dtype == expected:
        return CheckResult(
            name=name,
            passed=True,
            message=f"dtype {expected} as expected",
            hidden=hidden,
        )
    message = f"got dtype {got.dtype}, expected {expected}"
    if got.dtype.is_floating_point != expected.is_floating_point:
        message += (
            ": an integer tensor cannot carry these values"
            if not got.dtype.is_floating_point
            else ": the answer is an integer tensor"
        )
    if hint:
        message += f"; {hint}"
    return CheckResult(
        name=name,
        passed=False,
        message=message,
        expected=str(expected),
        got=str(got.dtype),
        diagnosis="wrong-dtype",
        hidden=hidden,
    )


def _index(flat_index: int, shape) -> list[int]:
    return [int(i) for i in torch.unravel_index(torch.tensor(flat_index), shape)]


def check_finite(
    name: str,
    got: torch.Tensor,
    *,
    what: str = "the output",
    hint: tuple[str | None, str] | None = None,
    hidden: bool = False,
) -> CheckResult:
    """Fail when NaN or inf appear where the reference has none.

    `hint` is (diagnosis, sentence), e.g. ("unstable-softmax", "subtract the
    max before exp").
    """
    if not got.is_floating_point():
        return CheckResult(
            name=name, passed=True, message="integer values", hidden=hidden
        )
    nan, inf = torch.isnan(got), torch.isinf(got)
    if not nan.any() and not inf.any():
        return CheckResult(
            name=name, passed=True, message=f"{what} is finite", hidden=hidden
        )
    parts = []
    for label, mask in (("NaN", nan), ("inf", inf)):
        count = int(mask.sum())
        if count:
            first = _index(int(mask.flatten().nonzero()[0]), got.shape)
            parts.append(
                f"{label} at {count} of {got.numel()} positions (first at {first})"
            )
    message = f"{what}: " + " and ".join(parts)
    diagnosis = None
    if hint is not None:
        diagnosis, sentence = hint
        message += f": {sentence}"
    return CheckResult(
        name=name, passed=False, message=message, diagnosis=diagnosis, hidden=hidden
    )


def error_report(got: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float):
    """(mismatched count, max abs error, max rel error, worst index, got, want)."""
    g, e = got.detach().double(), expected.detach().double()
    diff = (g - e).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    # Where the reference is inf or NaN (a filtered logit, a masked score),
    # only the same value matches: no tolerance reaches -inf from 0 (the
    # rule below would compare inf with NaN there, and call that close).
    special = ~torch.isfinite(e)
    same = (g == e) | (torch.isnan(g) & torch.isnan(e))
    bad = torch.where(special, ~same, diff > atol + rtol * e.abs())
    rel = diff / e.abs().clamp_min(1e-12)
    worst = int(diff.flatten().argmax()) if diff.numel() else 0
    return (
        int(bad.sum()),
        float(diff.max()) if diff.numel() else 0.0,
        float(rel.max()) if rel.numel() else 0.0,
        _index(worst, got.shape) if diff.numel() else [],
        float(g.flatten()[worst]) if diff.numel() else 0.0,
        float(e.flatten()[worst]) if diff.numel() else 0.0,
    )


def check_allclose(
    name: str,
    got: torch.Tensor,
    expected: torch.Tensor,
    *,
    rtol: float,
    atol: float,
    what: str = "values",
    extra: str = "",
    hidden: bool = False,
) -> CheckResult:
    """Closeness with stated tolerances, and where the worst element is."""
    bad, max_abs, max_rel, worst, g, e = error_report(got, expected, rtol, atol)
    tolerance = f"rtol={rtol:g}, atol={atol:g}"
    if bad == 0:
        message = (
            f"{what} match the reference within {tolerance} "
            f"(max abs error {max_abs:.1e})"
        )
        return CheckResult(
            name=name,
            passed=True,
            message=message + (f"\n{extra}" if extra else ""),
            hidden=hidden,
        )
    message = (
        f"{what} differ from the reference at {bad} of {got.numel()} elements "
        f"({tolerance}): max abs error {max_abs:.2e}, max rel error {max_rel:.2e}; "
        f"worst at {worst}: got {g:.6g}, expected {e:.6g}"
    )
    return CheckResult(
        name=name,
        passed=False,
        message=message + (f"\n{extra}" if extra else ""),
        expected=f"{e:.6g} at {worst}",
        got=f"{g:.6g} at {worst}",
        hidden=hidden,
    )


def compare_tensor(
    name: str,
    info: dict | None,
    got,
    expected: torch.Tensor,
    *,
    axes,
    sizes: dict | None = None,
    shape_hints: dict | None = None,
    rtol: float,
    atol: float,
    what: str = "the output",
    finite_hint: tuple[str | None, str] | None = None,
    dtype_hint: str = "",
    extra: str = "",
    hidden: bool = False,
) -> list[CheckResult]:
    """The usual chain: a tensor? its shape, dtype, finiteness, values.

    Stops at the first failure that makes later checks meaningless (no
    tensor, wrong shape); a wrong dtype still gets its values compared.
    """
    missing = check_is_tensor(f"{name}: type", info, got, hidden=hidden)
    if missing:
        return [missing]
    shape = check_shape(
        f"{name}: shape",
        tuple(got.shape),
        tuple(expected.shape),
        axes,
        sizes,
        hints=shape_hints,
        hidden=hidden,
    )
    results = [shape]
    if not shape.passed:
        return [_shape_from_values(shape, got, expected, axes, rtol, atol)]
    results.append(
        check_dtype(
            f"{name}: dtype", got, expected.dtype, hint=dtype_hint, hidden=hidden
        )
    )
    if expected.is_floating_point() and torch.isfinite(expected).all():
        finite = check_finite(
            f"{name}: finite", got, what=what, hint=finite_hint, hidden=hidden
        )
        results.append(finite)
        if not finite.passed:
            return results
    results.append(
        check_allclose(
            f"{name}: values",
            got,
            expected,
            rtol=rtol,
            atol=atol,
            what=f"values of {what}" if what != "values" else what,
            extra=extra,
            hidden=hidden,
        )
    )
    return results


def _reorders_to(got: torch.Tensor, expected: torch.Tensor, rtol, atol) -> bool:
    """Does some permute of got's axes give the expected values?"""
    for order in itertools.permutations(range(got.dim())):
        moved = got.permute(order)
        if moved.shape == expected.shape and torch.allclose(
            moved.double(), expected.double(), rtol=rtol, atol=atol, equal_nan=True
        ):
            return True
    return False


def _part_of(got: torch.Tensor, expected: torch.Tensor, axis: int, rtol, atol):
    """The first index of `expected` along `axis` from which `got` is a
    slice of it (the start or the end), else None."""
    n, m = got.shape[axis], expected.shape[axis]
    if n >= m:
        return None
    for start in dict.fromkeys((0, m - n)):
        part = expected.narrow(axis, start, n)
        if torch.allclose(
            got.double(), part.double(), rtol=rtol, atol=atol, equal_nan=True
        ):
            return start
    return None


def _shape_from_values(
    shape: CheckResult, got: torch.Tensor, expected: torch.Tensor, axes, rtol, atol
) -> CheckResult:
    """A wrong shape explained by sizes alone guesses; the values can say
    that the guess is wrong (the rule of fingerprints.distinct_match for
    shapes: a mistake is named only when the values fit it). Two cases:
    sizes in another order that no permute turns into the answer are not
    "swapped axes", and an axis that holds a slice of the expected one is
    short, not "missing"."""
    g, e = tuple(got.shape), tuple(expected.shape)
    if len(g) != len(e) or len(g) > 6 or not got.is_floating_point():
        return shape
    wrong = [i for i in range(len(g)) if g[i] != e[i]]
    text = None
    if sorted(g) == sorted(e) and not _reorders_to(got, expected, rtol, atol):
        sizes = "; ".join(
            f"the {axis_label(axes[i])} axis has {g[i]} entries where {e[i]} "
            "are expected"
            for i in wrong
        )
        text = (
            f"{sizes}. These are the expected sizes in another order, but no "
            "transpose or permute of your tensor gives the expected values: "
            "the entries are grouped differently, not only ordered differently"
        )
    elif (
        len(wrong) == 1
        and (start := _part_of(got, expected, wrong[0], rtol, atol)) is not None
    ):
        i = wrong[0]
        n, m = g[i], e[i]
        text = f"the {axis_label(axes[i])} axis has {n} entries, expected {m}"
        if n:
            where = "last" if start == 0 else "first"
            text += (
                f": yours equal the expected entries {start}..{start + n - 1}, "
                f"and the {where} {m - n} are missing"
            )
    if text is None:
        return shape
    return CheckResult(
        name=shape.name,
        passed=False,
        message=f"got {fmt_shape(g)}, expected {fmt_shape(e)}: {text}",
        expected=shape.expected,
        got=shape.got,
        hidden=shape.hidden,
    )


def failed(results: list[CheckResult]) -> bool:
    return any(not r.passed for r in results)


def top_tokens_report(got, expected: torch.Tensor, *, prompt: str, k: int = 5) -> str:
    """Top-k next tokens after `prompt` (row 0, last position) of both
    (b, t, vocab) logits, decoded side by side; "" unless the shapes match."""
    if got is None or got.shape != expected.shape:
        return ""
    from grading_engine.reference.tokenizer import get_encoding

    enc = get_encoding()

    def top(logits: torch.Tensor) -> str:
        ids = torch.topk(logits.double(), k).indices.tolist()
        return ", ".join(f"{enc.decode([i])!r} ({i})" for i in ids)

    return (
        f"top-{k} next tokens after {prompt!r}: yours {top(got[0, -1])}; "
        f"reference {top(expected[0, -1])}"
    )
