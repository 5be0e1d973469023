"""Tensor checks: what came back, its dtype, finiteness and closeness.

Two halves, one per side of the process boundary:

* `call_learner` and `capture_tensor` run in the CHILD: they turn whatever
  the learner's function did (returned, raised) into plain data.
* the `check_*` functions run in the trusted PARENT on tensors that came
  through safetensors, and write messages a learner can act on: where the
  worst element is, how far off it is, and what usually causes it.
"""

from __future__ import annotations

import itertools
import traceback

import torch

from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.shapes import check_shape, fmt_shape
from grading_engine.checks.shapes import label as axis_label
from grading_engine.harness.inputs import CHANGED_INPUTS, CHANGED_MODULES

SUBMISSION = "<submission>"  # the filename the harness compiles learner code as
_MAX_MESSAGE = 500

# dtypes safetensors can carry; anything else is reported by name only.
_WIRE_DTYPES = {
    torch.float64,
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
}


# --- child side -------------------------------------------------------------


def _safe_str(value) -> str:
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a learner's __str__ can raise
        return "<unprintable>"
    return text[:_MAX_MESSAGE] if isinstance(text, str) else "<unprintable>"


def call_learner(fn, *args, **kwargs):
    """Call the learner's function; return (value, None) or (None, error).

    Catching here (not in the harness) lets the parent attach a diagnosis to
    well-known errors, such as a matmul with a weight in the wrong
    orientation.
    """
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # noqa: BLE001 - SystemExit goes to the harness
        try:
            frames = [
                f
                for f in traceback.extract_tb(exc.__traceback__)
                if f.filename == SUBMISSION
            ]
        except Exception:  # noqa: BLE001
            frames = []
        return None, {
            "type": _safe_str(type(exc).__name__),
            "message": _safe_str(exc),
            "line": frames[-1].lineno if frames else None,
            "kinds": _builtin_kinds(exc),
        }


def _builtin_kinds(exc: BaseException) -> list[str]:
    """The built-in exception classes `exc` is an instance of, most specific
    first: a learner's `class TooLong(ValueError)` gives ["ValueError",
    "Exception", "BaseException"], so the parent can accept a subclass of
    the type a prompt names (see raised)."""
    try:
        return [
            kind.__name__
            for kind in type(exc).__mro__
            if kind.__module__ == "builtins" and issubclass(kind, BaseException)
        ][:12]
    except Exception:  # noqa: BLE001 - a rigged metaclass
        return []


def capture_tensor(value) -> tuple[dict, torch.Tensor | None]:
    """Describe a returned value; give back a wire-safe tensor if it is one."""
    kind = type(value)
    info = {"type": f"{kind.__module__}.{kind.__qualname__}"[:200]}
    if not isinstance(value, torch.Tensor):
        return info, None
    try:
        info["dtype"] = str(value.dtype)
        if value.dtype not in _WIRE_DTYPES or value.is_sparse:
            return info, None
        return info, value.detach().as_subclass(torch.Tensor).cpu().contiguous().clone()
    except Exception as exc:  # noqa: BLE001 - meta tensors, odd subclasses
        info["capture_error"] = _safe_str(exc)
        return info, None


def run_and_capture(fn, *args, **kwargs) -> tuple[dict, dict]:
    """The usual run_case body: call, then capture the output as "output"."""
    value, error = call_learner(fn, *args, **kwargs)
    info, tensor = capture_tensor(value)
    return {"error": error, "output": info}, (
        {"output": tensor} if tensor is not None else {}
    )


def run_with_future(fn, args, future_args=None) -> tuple[dict, dict]:
    """run_and_capture, then, if a tensor came back, a second call on
    `future_args` (the inputs with their later positions changed), whose
    output becomes tensors["future"] for fingerprints.causal_property."""
    data, tensors = run_and_capture(fn, *args)
    if "output" in tensors and future_args is not None:
        value, _ = call_learner(fn, *future_args)
        tensor = capture_tensor(value)[1]
        if tensor is not None:
            tensors["future"] = tensor
    return data, tensors


def capture_parts(fn, args, keys: tuple[str, ...]) -> tuple[dict, dict]:
    """Call the learner; capture a returned tuple of tensors under `keys`.

    `data["length"]` is set only when the tuple has one part per key, and
    `data["kind"]` describes what came back, for the parent to name.
    """
    value, error = call_learner(fn, *args)
    data: dict = {"error": error, "kind": capture_tensor(value)[0]}
    tensors: dict = {}
    if isinstance(value, (tuple, list)) and len(value) == len(keys):
        data["length"] = len(keys)
        for key, item in zip(keys, value, strict=True):
            data[key], tensor = capture_tensor(item)
            if tensor is not None:
                tensors[key] = tensor
    return data, tensors


# --- parent side ------------------------------------------------------------

MUTATED_INPUT = "mutated-input"
_WHY_IN_PLACE = (
    "the caller still needs that tensor: in a model it is an activation or "
    "a batch that autograd saved for the backward pass, which then computes "
    'wrong gradients or stops with "modified by an inplace operation". '
    "Leave your inputs as they are: use out-of-place ops (masked_fill, not "
    "masked_fill_; x = x - mean, not x -= mean; a new tensor, not an "
    "assignment into the argument), or work on x.clone()"
)


def _input_change(change: dict) -> str | None:
    """One sentence for a record the child's InputWatch wrote, else None."""
    arg = _safe_str(change.get("arg"))[:60]
    kind = change.get("kind")
    if kind == "values":
        count, numel = change.get("changed"), change.get("numel")
        if type(count) is int and type(numel) is int:
            return f"changed {count:,} of the {numel:,} values of `{arg}` in place"
        return f"changed the values of `{arg}` in place"
    if kind == "shape":
        before = _safe_str(change.get("before"))[:100]
        after = _safe_str(change.get("after"))[:100]
        return f"changed `{arg}` in place from {before} to {after}"
    if kind == "written":
        return (
            f"wrote into `{arg}` in place (its values came out the same, but "
            "its version counter moved, which is enough for autograd to "
            "refuse a backward pass through it)"
        )
    return None


def input_changes(name: str, data: dict, *, hidden: bool) -> list[CheckResult]:
    """[a failed check] when the learner's function changed an argument in place.

    Reads what the child recorded (grading_engine.harness.inputs); every
    harness's data carries it, so a check_case that does not end in
    tensor_answer adds `+ input_changes(...)` itself.
    """
    records = data.get(CHANGED_INPUTS) if isinstance(data, dict) else None
    if not records:
        return []
    if not isinstance(records, list):
        records = [{}]
    sentences = [_input_change(r) if isinstance(r, dict) else None for r in records[:8]]
    said = [s for s in sentences if s] or ["changed an argument in place"]
    args = [_safe_str(r.get("arg"))[:60] for r in records[:8] if isinstance(r, dict)]
    return [
        fail(
            f"{name}: inputs left unchanged",
            f"your function {'; it '.join(said)}: {_WHY_IN_PLACE}",
            expected="the arguments as they were passed",
            got="changed in place: " + ", ".join(f"`{a}`" for a in args if a),
            diagnosis=MUTATED_INPUT,
            hidden=hidden,
        )
    ]


MODEL_LEFT_UNTIED = "model-left-untied"
MODEL_CHANGED = "model-changed"
# Every kind of record ModuleSnapshot writes; a harness whose exercise is to
# change the model declares MODEL_CHANGES = MODEL_CHANGE_KINDS (or a subset)
# and checks the state it must be left in itself.
MODEL_CHANGE_KINDS = frozenset(
    {"missing", "added", "untied", "tied", "replaced", "shape", "values"}
    | {"requires_grad"}
)
_MODEL_CHANGE = {
    "missing": "removed the parameter(s) {names}",
    "added": "added the parameter(s) {names}",
    "untied": "left {names} as separate tensors: they were one tied Parameter "
    "when your function was called, so the caller's model is no longer "
    "tied (its optimizer now updates two copies that drift apart, and a "
    "checkpoint stores both). Tie it back before returning, e.g. in a "
    "`finally:` block",
    "tied": "tied {names} together: they were separate Parameters",
    "replaced": "replaced the Parameter object(s) {names} with new ones (an "
    "optimizer built on the old ones no longer updates what the model uses)",
    "shape": "changed the shape of {names}",
    "values": "changed the values of {names}",
    "requires_grad": "flipped requires_grad on {names} (training would "
    "silently stop or start updating them)",
}


def _model_change(change: dict) -> str | None:
    sentence = _MODEL_CHANGE.get(change.get("kind"))
    names = change.get("names")
    if sentence is None or not isinstance(names, list):
        return None
    shown = ", ".join(f"`{_safe_str(n)[:80]}`" for n in names[:5])
    count = change.get("count")
    if type(count) is int and count > len(names[:5]):
        shown += f" and {count - len(names[:5]):,} more"
    arg = _safe_str(change.get("arg"))[:60]
    return f"{sentence.format(names=shown)} (in `{arg}`)"


def model_changes(
    name: str, data: dict, *, allowed: frozenset = frozenset(), hidden: bool
) -> list[CheckResult]:
    """[a failed check] when the learner left a model it was given changed
    in a way the exercise does not ask for (see harness.inputs.ModuleSnapshot)."""
    records = data.get(CHANGED_MODULES) if isinstance(data, dict) else None
    if not records or not isinstance(records, list):
        return []
    records = [
        r for r in records[:16] if isinstance(r, dict) and r.get("kind") not in allowed
    ]
    said = [s for r in records if (s := _model_change(r))]
    if not said:
        return []
    untied = any(r.get("kind") == "untied" for r in records)
    return [
        fail(
            f"{name}: model left as it was",
            "your function " + "; it ".join(said) + ". The caller keeps using "
            "this model after your function returns: leave it as you found it "
            "(work on a copy, or restore what you changed before returning)",
            expected="the model as it was passed",
            got="; ".join(sorted({_safe_str(r.get("kind")) for r in records})),
            diagnosis=MODEL_LEFT_UNTIED if untied else MODEL_CHANGED,
            hidden=hidden,
        )
    ]


def shared_checks(module, case: dict, data: dict, results: list) -> list[CheckResult]:
    """The judges every exercise gets, after its own check_case: inputs
    changed in place (unless the harness already reported it) and models
    left changed beyond what the harness's MODEL_CHANGES allows."""
    hidden, name = bool(case.get("hidden")), _safe_str(case.get("name"))
    extra = []
    if not any(r.diagnosis == MUTATED_INPUT for r in results):
        extra += input_changes(name, data, hidden=hidden)
    allowed = getattr(module, "MODEL_CHANGES", frozenset())
    extra += model_changes(name, data, allowed=frozenset(allowed), hidden=hidden)
    return extra


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
        error = {"type": "Error", "message": _safe_str(error)}
    kind = _safe_str(error.get("type"))
    text = _safe_str(error.get("message"))
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
    got = _safe_str(info.get("type", "nothing"))
    dtype = info.get("dtype")
    if dtype:
        message = f"returned a tensor of dtype {_safe_str(dtype)}; return {what}"
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
    bad = diff > atol + rtol * e.abs()
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
