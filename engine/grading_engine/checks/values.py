"""Checks on plain values: exact ints, parameter counts, tied tensors, grads.

Every function takes data captured in the child (see grading_engine.harness.capture)
and values the parent computed itself, and returns a CheckResult a learner can
act on: what was expected, what came back and the likely cause.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.slip_rules import ruled_out

ALIASED_DATA = (
    "two Parameters share storage but keep separate gradients: assign the "
    "Parameter itself, do not alias .data"
)


def captured_int(captured) -> int | None:
    """The value of a `capture_int` record if it holds an integer, else None.

    The child sets the value only for an integer number (an int, a numpy
    integer, a 0-d integer tensor: grading_engine.harness.capture.plain_int),
    already converted to a plain int, so its type name needs no check here.
    """
    if not isinstance(captured, dict) or not isinstance(captured.get("type"), str):
        return None
    value = captured.get("value")
    return value if type(value) is int else None


def _type_hint(type_name: str, shown: str) -> str:
    if type_name in ("builtins.bool", "numpy.bool", "numpy.bool_"):
        return "a bool is not a count: return an int"
    if type_name == "builtins.float" or type_name.startswith("numpy.float"):
        return f"a float ({shown}) is not an exact count: return an int"
    if type_name.startswith("numpy."):
        return f"a {type_name} is not an integer: return an int"
    if type_name.startswith("torch."):
        return (
            f"a {type_name} that is not a 0-d integer tensor is not a count: "
            "return an int (.item() of a 0-d tensor)"
        )
    if type_name == "builtins.NoneType":
        return "the function returned None: did you forget `return`?"
    return f"expected a plain int, not a {type_name}"


def slip_diagnosis(slips: list[tuple[int, str, str]]):
    """A `diagnose` for exact_int from (wrong value, diagnosis, hint) rows.

    A value names a mistake only when exactly one slip predicts it: when two
    slips give the same number the learner is told the answer is wrong, not
    a guess at which mistake they made. Rows of one slip (two ways to write
    one mistake) count as one.
    """

    def diagnose(got: int):
        matches = {
            name: hint
            for value, name, hint in slips
            if value == got and not ruled_out(name)
        }
        return next(iter(matches.items())) if len(matches) == 1 else None

    return diagnose


def exact_int(
    name: str,
    captured,
    expected: int,
    *,
    hidden: bool = False,
    diagnose=None,
) -> CheckResult:
    """Pass only for an integer number (see captured_int) equal to `expected`.

    A float equal to the int, a bool or an object with a rigged `__eq__`
    fails, and the message names what came back. `diagnose(got) ->
    (diagnosis, hint) | None` names a well-known wrong answer.
    """
    if not isinstance(captured, dict) or not isinstance(captured.get("type"), str):
        return CheckResult(
            name, False, "the grader could not read your answer", hidden=hidden
        )
    type_name = captured["type"]
    shown = str(captured.get("repr", "?"))[:200]
    got = captured_int(captured)
    if got is None:
        return CheckResult(
            name,
            False,
            f"expected the int {expected:,}, got {shown} of type {type_name}: "
            + _type_hint(type_name, shown),
            expected=f"{expected:,} (int)",
            got=f"{shown} ({type_name})",
            diagnosis="not-an-int",
            hidden=hidden,
        )
    if got == expected:
        return CheckResult(
            name, True, f"{got:,} is right", f"{expected:,}", f"{got:,}", hidden=hidden
        )
    message = f"expected {expected:,}, got {got:,} (off by {got - expected:+,})"
    diagnosis = None
    if diagnose is not None:
        found = diagnose(got)
        if found:
            diagnosis, hint = found
            message += f": {hint}"
    return CheckResult(
        name,
        False,
        message,
        expected=f"{expected:,}",
        got=f"{got:,}",
        diagnosis=diagnosis,
        hidden=hidden,
    )


@dataclass(frozen=True)
class ModuleCount:
    """One row of a parameter breakdown: a submodule's own count."""

    module: str
    expected: int
    got: dict | None  # a capture_int record, None if not measured
    shared_with: str | None = None  # another row that holds the same tensor


def breakdown_table(rows: list[ModuleCount]) -> str:
    """A small fixed-width table: module, expected, got, and shared marks."""
    width = max([len(row.module) for row in rows] + [6])
    lines = [f"{'module':<{width}}  {'expected':>13}  {'got':>13}"]
    for row in rows:
        got = captured_int(row.got)
        if row.got is None:
            shown = "-"
        elif got is None:
            shown = str(row.got.get("type", "?"))[:13]
        else:
            shown = f"{got:,}"
        mark = "" if got is None or got == row.expected else "  <- differs"
        if row.shared_with:
            mark += f"  (shares its tensor with {row.shared_with})"
        lines.append(f"{row.module:<{width}}  {row.expected:>13,}  {shown:>13}{mark}")
    return "\n".join(lines)


def _count_slip(
    got: int,
    expected: int,
    *,
    shared_extra: int,
    shared_label: str,
    buffer_numel: int,
    state_dict_total: int | None,
    frozen_numel: int,
):
    """The usual counting slip a wrong total points at, as (diagnosis, hint)."""
    extra = got - expected
    if shared_extra and extra == shared_extra:
        return (
            "counted-shared-twice",
            f"you counted {shared_label} twice (+{shared_extra:,}); "
            "model.parameters() yields each Parameter once",
        )
    if buffer_numel and extra == buffer_numel:
        return (
            "counted-buffers",
            f"you counted the buffers too (+{buffer_numel:,}); buffers such "
            "as masks and running statistics are state, not parameters",
        )
    if state_dict_total is not None and got == state_dict_total:
        return (
            "counted-state-dict",
            "that is the size of the state_dict, which lists a tied tensor "
            "under each of its names and holds persistent buffers too; "
            "count model.parameters()",
        )
    if frozen_numel and extra == -frozen_numel:
        return (
            "skipped-frozen",
            f"you left out {frozen_numel:,} frozen parameters "
            "(requires_grad=False); they are still parameters of the model",
        )
    return None


def parameter_count(
    name: str,
    captured,
    *,
    expected: int,
    rows: list[ModuleCount],
    shared_extra: int = 0,
    shared_label: str = "a shared tensor",
    buffer_numel: int = 0,
    state_dict_total: int | None = None,
    frozen_numel: int = 0,
    hidden: bool = False,
) -> CheckResult:
    """Compare a learner's parameter count and explain it module by module.

    `shared_extra` is what counting a tied tensor once per use adds,
    `buffer_numel` what counting buffers adds, `state_dict_total` what summing
    the state_dict gives and `frozen_numel` what skipping parameters with
    requires_grad=False removes. These make the usual slips recognisable from
    the total alone.
    """

    def diagnose(got: int):
        return _count_slip(
            got,
            expected,
            shared_extra=shared_extra,
            shared_label=shared_label,
            buffer_numel=buffer_numel,
            state_dict_total=state_dict_total,
            frozen_numel=frozen_numel,
        )

    result = exact_int(name, captured, expected, hidden=hidden, diagnose=diagnose)
    if result.passed or not rows:
        return result
    return replace(result, message=f"{result.message}\n\n{breakdown_table(rows)}")


def tied_identity(
    name: str,
    facts: dict,
    *,
    head_numel: int,
    hidden: bool = False,
) -> CheckResult:
    """Is the head's weight the very Parameter the embedding uses?

    `facts` are the child's observations after the learner's call:
    ``same_object`` (`is`), ``same_data_ptr``, ``same_storage``,
    ``equal_values``, ``head_shape`` and ``wte_shape``.
    """
    if not isinstance(facts, dict):
        return CheckResult(name, False, "the grader could not read the model")
    if facts.get("same_object") is True:
        return CheckResult(
            name,
            True,
            "lm_head.weight is transformer.wte.weight: one Parameter, one tensor",
            hidden=hidden,
        )
    got, diagnosis, message = _how_untied(facts, head_numel)
    return fail(
        name,
        message,
        expected="lm_head.weight is transformer.wte.weight",
        got=got,
        diagnosis=diagnosis,
        hidden=hidden,
    )


def _how_untied(facts: dict, head_numel: int) -> tuple[str, str, str]:
    """(got, diagnosis, message) for a head that is not the embedding's
    Parameter: an alias of .data, a transposed copy, a copy, or unrelated."""
    head_shape, wte_shape = facts.get("head_shape"), facts.get("wte_shape")
    if facts.get("same_storage") is True:
        return (
            "two Parameter objects over one storage",
            "aliased-data",
            f"{ALIASED_DATA}. The two names point at one block of memory but "
            "autograd sees two leaves, so each collects only its own gradient.",
        )
    if (
        isinstance(head_shape, list)
        and isinstance(wte_shape, list)
        and head_shape == wte_shape[::-1]
        and head_shape != wte_shape
    ):
        return (
            f"a separate tensor of shape {tuple(head_shape)}",
            "transposed-head",
            f"lm_head.weight has shape {tuple(head_shape)} but the embedding is "
            f"{tuple(wte_shape)}: nn.Linear stores its weight as (out, in), the "
            "same (vocab, n_embd) layout as the embedding, so no transpose is "
            "needed",
        )
    if facts.get("equal_values") is True:
        return (
            f"a copy ({head_numel:,} extra elements)",
            "copied-not-shared",
            "you copied wte instead of sharing it: the head has its own "
            f"{head_numel:,}-element tensor. Assign the Parameter itself: "
            "model.lm_head.weight = model.transformer.wte.weight",
        )
    return (
        "two unrelated Parameters",
        "not-tied",
        "lm_head.weight is still its own Parameter with its own values: the "
        "head and the embedding are not tied",
    )


def _close(a, b, *, atol: float, rtol: float) -> bool:
    return (
        isinstance(a, torch.Tensor)
        and a.shape == b.shape
        and a.dtype == b.dtype
        and bool(torch.allclose(a, b, atol=atol, rtol=rtol))
    )


def tied_gradient(
    name: str,
    *,
    got_wte_grad: torch.Tensor | None,
    got_head_grad: torch.Tensor | None,
    embedding_part: torch.Tensor,
    head_part: torch.Tensor,
    same_storage: bool,
    atol: float = 1e-5,
    rtol: float = 1e-4,
    hidden: bool = False,
) -> CheckResult:
    """A tied weight's grad must be the embedding-use grad plus the head-use grad.

    The parent computes both parts on its own model; the learner's grads come
    from the child. Matching only one part names how the tie went wrong.
    """
    expected = embedding_part + head_part
    want = "embedding grad + head grad"
    if got_wte_grad is None:
        return fail(
            name,
            "transformer.wte.weight.grad is None after backward: the embedding "
            "weight no longer takes part in the forward pass",
            expected=want,
            got="None",
            diagnosis="no-gradient",
            hidden=hidden,
        )
    if _close(got_wte_grad, expected, atol=atol, rtol=rtol) and (
        got_head_grad is None or _close(got_head_grad, expected, atol=atol, rtol=rtol)
    ):
        return CheckResult(
            name,
            True,
            "the shared weight's grad is the sum of its embedding and head uses",
            hidden=hidden,
        )
    if _close(got_wte_grad, embedding_part, atol=atol, rtol=rtol):
        diagnosis, message = _one_use_only(expected.numel(), same_storage)
        return fail(
            name,
            message,
            expected=want,
            got="embedding grad only",
            diagnosis=diagnosis,
            hidden=hidden,
        )
    diff = "shape differs"
    if isinstance(got_wte_grad, torch.Tensor) and got_wte_grad.shape == expected.shape:
        gap = (got_wte_grad.double() - expected.double()).abs().max().item()
        diff = f"largest difference {gap:.3g}"
    return fail(
        name,
        "transformer.wte.weight.grad is not the sum of the embedding and head "
        f"gradients ({diff}): after tying, one Parameter must serve both uses",
        expected=want,
        got="a different gradient",
        hidden=hidden,
    )


def _one_use_only(numel: int, same_storage: bool) -> tuple[str, str]:
    """(diagnosis, message): why wte's grad holds only the embedding part."""
    if same_storage:
        return "aliased-data", ALIASED_DATA
    return "copied-not-shared", (
        "you copied wte instead of sharing it: the head has its own "
        f"{numel:,}-element tensor, so wte's grad holds only the "
        "embedding part and misses the head part"
    )
