"""Notice when the learner's function changes a tensor it was given.

A function that fills `scores` with -inf, centres `x` with `x -= mean` or
shifts `targets` in place hands back a right answer and corrupts its
caller's tensor: in a model that tensor is often one autograd saved for the
backward pass, which then computes wrong gradients or fails with "modified
by an inplace operation". So the child wraps the learner's function
(`InputWatch`, applied once by grading_engine.harness.child to every
exercise) and records, per argument, whether its values, shape or version
counter changed during a call. The parent turns the record into a failed
check (grading_engine.checks.in_place.input_changes).

Plain tensors are watched where they are passed: as arguments, or inside a
list, tuple or dict argument (a state dict, a KV cache), up to a budget of
elements. Parameters are not (clip-grad-norm is about changing them).

A model (an nn.Module argument, or one in a list) is watched for the state
it is left in (`ModuleSnapshot`): which parameters are one tied tensor,
which were replaced, reshaped, re-valued or had requires_grad flipped. A
function that unties GPT-2's head for a backward pass and never ties it back
returns right numbers and leaves its caller a different model. Exercises
whose job is to change the model declare what may change (MODEL_CHANGES in
the harness); the parent judges the record (checks.in_place.model_changes).
Gradients and buffers are not watched: a backward pass writes .grad by
design, and the train/eval flag is not a fact any prompt here states.

Trust: the record is made in the child, next to the learner's code, so a
submission that tampers with the harness can forge it; but a forged record
can only hide that submission's own mutation, never make a wrong answer
right (the parent rebuilds every input and the reference from the case
spec). Comparing in the parent would cost sending every input back over the
wire and needs each exercise's input builder on the parent's judging path,
which a harness does not declare; this trade-off is the price of doing it
once for all of them.
"""

from __future__ import annotations

import functools
import inspect
import zlib

import torch

# Up to this many elements an input is copied and compared element by
# element (the record says how many changed); a bigger one (GPT-2's token
# table is 38.6 M) is summed with CRC-32 before and after instead.
_COPY_LIMIT = 1 << 22
# The key of a case's data that lists the arguments changed in place.
CHANGED_INPUTS = "changed_inputs"
# The key of a case's data that lists how the models it was given changed.
CHANGED_MODULES = "changed_modules"
# Tensors inside containers are watched up to this many elements per call
# (a GPT-2 small state dict is 124 M: comparing it on every call of a
# harness that probes the learner several times would cost seconds).
_CONTAINER_BUDGET = 1 << 24
_MAX_LEAVES = 64
_MAX_NAMES = 5  # parameter names quoted per change
# A model bigger than _COPY_LIMIT is compared on this many evenly spaced
# values per parameter: summing GPT-2 small costs 0.3 s a call, and
# count-params calls the learner 17 times a case.
_SAMPLE = 1 << 12
_MAX_NAME = 60
_MAX_WATCHED = 32  # arguments per call; a real signature has a handful


def _param_names(fn, count: int) -> list[str]:
    """The learner's own names for the first `count` positional arguments."""
    names = [f"argument {i + 1}" for i in range(count)]
    try:
        params = list(inspect.signature(fn).parameters.values())
    except BaseException:  # noqa: BLE001 - a rigged __signature__ and the like
        return names
    positional = (
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )
    for i, param in enumerate(params[:count]):
        if param.kind not in positional:
            break
        names[i] = param.name
    return names


def _digest(tensor: torch.Tensor) -> int | None:
    try:
        raw = tensor.detach().contiguous().view(-1).view(torch.uint8)
        return zlib.crc32(memoryview(raw.numpy()))
    except BaseException:  # noqa: BLE001 - odd dtypes, meta or sparse tensors
        return None


def _version(tensor: torch.Tensor) -> int | None:
    try:
        version = tensor._version
    except BaseException:  # noqa: BLE001 - inference tensors have none
        return None
    return version if type(version) is int else None


class _Snapshot:
    """What a tensor argument looked like just before the call."""

    def __init__(self, tensor: torch.Tensor):
        self.shape = tuple(tensor.shape)
        self.dtype = tensor.dtype
        self.version = _version(tensor)
        self.copy: torch.Tensor | None = None
        self.digest: int | None = None
        if tensor.device.type != "cpu" or tensor.is_sparse:
            return
        if tensor.numel() <= _COPY_LIMIT:
            self.copy = tensor.detach().clone()
        else:
            self.digest = _digest(tensor)

    def change(self, tensor: torch.Tensor) -> dict | None:
        """How `tensor` differs from this snapshot, or None if it does not."""
        if tuple(tensor.shape) != self.shape or tensor.dtype != self.dtype:
            return {
                "kind": "shape",
                "before": f"{list(self.shape)} {self.dtype}"[:100],
                "after": f"{list(tensor.shape)} {tensor.dtype}"[:100],
            }
        changed = None
        if self.copy is not None:
            changed = _count_changed(self.copy, tensor.detach())
        elif self.digest is not None:
            after = _digest(tensor)
            changed = None if after is None else int(after != self.digest)
        if changed:
            exact = self.copy is not None
            return {"kind": "values", "changed": changed if exact else None}
        version = _version(tensor)
        if None not in (version, self.version) and version != self.version:
            return {"kind": "written"}  # an in-place op that kept the values
        return None


def _count_changed(before: torch.Tensor, after: torch.Tensor) -> int:
    same = before == after
    if before.is_floating_point() or before.is_complex():
        same |= torch.isnan(before) & torch.isnan(after)
    return int((~same).sum())


def _watchable(name: str, value, budget: list[int], *, depth: int) -> list:
    """(name, value, snapshot) for each tensor or model in an argument."""
    if isinstance(value, torch.nn.Parameter):
        return []
    if isinstance(value, torch.Tensor):
        if depth:  # inside a container: within the budget only
            if value.numel() > budget[0]:
                return []
            budget[0] -= value.numel()
        return [(name, value, _Snapshot(value))]
    if isinstance(value, torch.nn.Module):
        return [(name, value, ModuleSnapshot(value))]
    if depth >= 2 or type(value) not in (list, tuple, dict):
        return []
    items = value.items() if type(value) is dict else enumerate(value)
    found = []
    for key, item in list(items)[:_MAX_LEAVES]:
        label = f"{name}[{key!r}]" if type(value) is dict else f"{name}[{key}]"
        found += _watchable(label[: _MAX_NAME * 2], item, budget, depth=depth + 1)
    return found


def _param_state(module: torch.nn.Module) -> dict[str, torch.nn.Parameter]:
    """Every parameter by every name it has (a tied one under both)."""
    return dict(module.named_parameters(remove_duplicate=False))


def _sample(tensor: torch.Tensor) -> torch.Tensor | None:
    """Up to _SAMPLE evenly spaced values of a big parameter, copied."""
    try:
        flat = tensor.detach().reshape(-1)
        step = max(1, -(-flat.numel() // _SAMPLE))
        return flat[::step].clone()
    except BaseException:  # noqa: BLE001 - odd layouts
        return None


class ModuleSnapshot:
    """A model's parameters just before the call: identity, shape, values.

    Values are copied while the model is small; a bigger one (GPT-2 small is
    124 M) keeps 4,096 evenly spaced values per parameter, which any real
    re-initialisation, scaling or zeroing changes (a write to a few scattered
    elements could fall between them).
    """

    def __init__(self, module: torch.nn.Module):
        params = _param_state(module)
        self.ids = {name: id(p) for name, p in params.items()}
        self.keep = list(params.values())  # keeps the ids from being reused
        self.shapes = {name: tuple(p.shape) for name, p in params.items()}
        self.grads = {name: bool(p.requires_grad) for name, p in params.items()}
        unique = {id(p): p for p in params.values()}
        small = sum(p.numel() for p in unique.values()) <= _COPY_LIMIT
        self.values = {
            name: p.detach().clone() if small else _sample(p)
            for name, p in params.items()
        }

    def _same_values(self, name: str, param: torch.Tensor) -> bool:
        before = self.values[name]
        if before is None:
            return True  # could not be read before the call
        if before.numel() == param.numel():
            after = param.detach()
        else:
            after = _sample(param)
        if after is None or before.numel() != after.numel():
            return False
        after = after.reshape(before.shape)
        return before.dtype == after.dtype and _count_changed(before, after) == 0

    def change(self, module: torch.nn.Module) -> list[dict] | None:
        """How the model was left different, as records; None if it was not."""
        after = _param_state(module)
        records = []

        def record(kind: str, names: list[str]) -> None:
            if names:
                records.append(
                    {"kind": kind, "names": names[:_MAX_NAMES], "count": len(names)}
                )

        record("missing", [n for n in self.ids if n not in after])
        record("added", [n for n in after if n not in self.ids])
        both = [n for n in self.ids if n in after]
        pairs = [(a, b) for i, a in enumerate(both) for b in both[i + 1 :]]
        untied = [
            (a, b)
            for a, b in pairs
            if self.ids[a] == self.ids[b] and after[a] is not after[b]
        ]
        tied = [
            (a, b)
            for a, b in pairs
            if self.ids[a] != self.ids[b] and after[a] is after[b]
        ]
        record("untied", [f"{a} and {b}" for a, b in untied])
        record("tied", [f"{a} and {b}" for a, b in tied])
        in_tying = {n for pair in untied + tied for n in pair}
        record(
            "replaced",
            [n for n in both if id(after[n]) != self.ids[n] and n not in in_tying],
        )
        record("shape", [n for n in both if tuple(after[n].shape) != self.shapes[n]])
        reshaped = {n for n in both if tuple(after[n].shape) != self.shapes[n]}
        record(
            "values",
            [
                n
                for n in both
                if n not in reshaped and not self._same_values(n, after[n])
            ],
        )
        record(
            "requires_grad",
            [n for n in both if bool(after[n].requires_grad) != self.grads[n]],
        )
        return records or None


class InputWatch:
    """The learner's function, watched: records the tensors it changes.

    Called exactly like the function (functools.wraps keeps its name and
    signature for harnesses that read them). `changes` maps an argument's
    name to how its first changing call changed it; `watched` counts the
    tensor arguments looked at over all calls.
    """

    def __init__(self, fn):
        self.fn = fn
        self.changes: dict[str, dict] = {}
        self.module_changes: dict[str, list[dict]] = {}
        self.watched = 0
        try:
            functools.update_wrapper(self, fn, updated=())
        except Exception:  # noqa: BLE001, S110 - a learner's odd callable
            pass

    def __call__(self, *args, **kwargs):
        watched = self._tensors(args, kwargs)
        self.watched += len(watched)
        try:
            return self.fn(*args, **kwargs)
        finally:
            self._compare(watched)

    def _tensors(self, args, kwargs) -> list[tuple[str, object, object]]:
        found = []
        try:
            names = _param_names(self.fn, len(args))
            named = [*zip(names, args, strict=True), *kwargs.items()]
            budget = [_CONTAINER_BUDGET]
            for name, value in named[:_MAX_WATCHED]:
                found += _watchable(str(name)[:_MAX_NAME], value, budget, depth=0)
        except Exception:  # noqa: BLE001, S110 - never stop the learner's call
            pass
        return found

    def _compare(self, watched) -> None:
        for name, value, snapshot in watched:
            if name in self.changes or name in self.module_changes:
                continue
            try:
                change = snapshot.change(value)
            except Exception:  # noqa: BLE001, S112 - a value the call broke
                continue
            if change is None:
                continue
            if isinstance(snapshot, ModuleSnapshot):
                self.module_changes[name] = [{"arg": name, **c} for c in change]
            else:
                self.changes[name] = {"arg": name, "numel": value.numel(), **change}

    def report(self) -> list[dict]:
        """JSON-able records, one per changed argument, in call order."""
        return list(self.changes.values())

    def report_modules(self) -> list[dict]:
        """JSON-able records of how each model argument was left changed."""
        return [c for changes in self.module_changes.values() for c in changes]


def run_watched(module, fn, case: dict):
    """`module.run_case` with `fn` watched; changes go in data[CHANGED_INPUTS]
    (tensors) and data[CHANGED_MODULES] (models).

    What the child does for every case (grading_engine.harness.child), and
    what an in-process grade must do to judge the same way.
    """
    watch = InputWatch(fn)
    data, tensors = module.run_case(watch, case)
    if isinstance(data, dict) and (changed := watch.report()):
        data[CHANGED_INPUTS] = changed
    if isinstance(data, dict) and (modules := watch.report_modules()):
        data[CHANGED_MODULES] = modules
    return data, tensors
