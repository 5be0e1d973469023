"""Notice when the learner's function changes a tensor it was given.

A function that fills `scores` with -inf, centres `x` with `x -= mean` or
shifts `targets` in place hands back a right answer and corrupts its
caller's tensor: in a model that tensor is often one autograd saved for the
backward pass, which then computes wrong gradients or fails with "modified
by an inplace operation". So the child wraps the learner's function
(`InputWatch`, applied once by grading_engine.harness.child to every
exercise) and records, per argument, whether its values, shape or version
counter changed during a call. The parent turns the record into a failed
check (grading_engine.checks.tensors.input_changes).

Only plain tensors passed as arguments are watched. A model, a list of
parameters or a state dict is not: exercises such as tie-weights,
clip-grad-norm or resize-tied-vocab are about changing those in place.

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

    def _tensors(self, args, kwargs) -> list[tuple[str, torch.Tensor, _Snapshot]]:
        found = []
        try:
            names = _param_names(self.fn, len(args))
            named = [*zip(names, args, strict=True), *kwargs.items()]
            for name, value in named[:_MAX_WATCHED]:
                if isinstance(value, torch.Tensor) and not isinstance(
                    value, torch.nn.Parameter
                ):
                    found.append((str(name)[:_MAX_NAME], value, _Snapshot(value)))
        except Exception:  # noqa: BLE001, S110 - never stop the learner's call
            pass
        return found

    def _compare(self, watched) -> None:
        for name, tensor, snapshot in watched:
            if name in self.changes:
                continue
            try:
                change = snapshot.change(tensor)
            except Exception:  # noqa: BLE001, S112 - a tensor the call broke
                continue
            if change is not None:
                self.changes[name] = {"arg": name, "numel": tensor.numel(), **change}

    def report(self) -> list[dict]:
        """JSON-able records, one per changed argument, in call order."""
        return list(self.changes.values())


def run_watched(module, fn, case: dict):
    """`module.run_case` with `fn` watched; the changes go in data[CHANGED_INPUTS].

    What the child does for every case (grading_engine.harness.child), and
    what an in-process grade must do to judge the same way.
    """
    watch = InputWatch(fn)
    data, tensors = module.run_case(watch, case)
    if isinstance(data, dict) and (changed := watch.report()):
        data[CHANGED_INPUTS] = changed
    return data, tensors
