"""What the learner's function changed in place, judged for every exercise.

The child records each tensor argument changed in place and each model left
changed (grading_engine.harness.inputs); these turn the records into failed
checks that say why it matters. `shared_checks` adds them to any harness's
results (grading.grade, the client's local check).
"""

from __future__ import annotations

from grading_engine.checks.learner_calls import safe_str
from grading_engine.checks.result import CheckResult, fail
from grading_engine.harness.inputs import CHANGED_INPUTS, CHANGED_MODULES

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
    arg = safe_str(change.get("arg"))[:60]
    kind = change.get("kind")
    if kind == "values":
        count, numel = change.get("changed"), change.get("numel")
        if type(count) is int and type(numel) is int:
            return f"changed {count:,} of the {numel:,} values of `{arg}` in place"
        return f"changed the values of `{arg}` in place"
    if kind == "shape":
        before = safe_str(change.get("before"))[:100]
        after = safe_str(change.get("after"))[:100]
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
    args = [safe_str(r.get("arg"))[:60] for r in records[:8] if isinstance(r, dict)]
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
    shown = ", ".join(f"`{safe_str(n)[:80]}`" for n in names[:5])
    count = change.get("count")
    if type(count) is int and count > len(names[:5]):
        shown += f" and {count - len(names[:5]):,} more"
    arg = safe_str(change.get("arg"))[:60]
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
            got="; ".join(sorted({safe_str(r.get("kind")) for r in records})),
            diagnosis=MODEL_LEFT_UNTIED if untied else MODEL_CHANGED,
            hidden=hidden,
        )
    ]


def shared_checks(module, case: dict, data: dict, results: list) -> list[CheckResult]:
    """The judges every exercise gets, after its own check_case: inputs
    changed in place (unless the harness already reported it) and models
    left changed beyond what the harness's MODEL_CHANGES allows."""
    hidden, name = bool(case.get("hidden")), safe_str(case.get("name"))
    extra = []
    if not any(r.diagnosis == MUTATED_INPUT for r in results):
        extra += input_changes(name, data, hidden=hidden)
    allowed = getattr(module, "MODEL_CHANGES", frozenset())
    extra += model_changes(name, data, allowed=frozenset(allowed), hidden=hidden)
    return extra
