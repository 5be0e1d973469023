"""The child's half of every authored exercise: build a case's inputs, call.

An authored exercise (grading_engine.authored) is a declaration, not a
module of its own, so one harness runs all of them. Each case it is handed
carries everything needed to build its inputs (the input specs, the case's
sizes and seed) and the names of the outputs to capture, so the child never
needs the declaration, and the reference, the known mistakes and the
learner's code, each run in a job of their own, get the same tensors.
"""

from __future__ import annotations

import torch

from grading_engine.checks.learner_calls import capture_parts, run_and_capture

SLUG = "authored"
ENTRY_POINT = "given by each authored exercise"
SIGNATURE = "given by each authored exercise"


def _size(case: dict, value) -> int:
    """An int, or the name of one of the case's sizes."""
    return int(case["sizes"][value]) if isinstance(value, str) else int(value)


def _tensor(spec: dict, case: dict, g: torch.Generator) -> torch.Tensor:
    shape = [_size(case, dim) for dim in spec["tensor"]]
    dtype = getattr(torch, spec.get("dtype", "float32"))
    low, high = spec.get("range", (None, None))
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    if not dtype.is_floating_point:
        return torch.randint(int(low), int(high), shape, generator=g, dtype=dtype)
    if low is None:
        values = torch.randn(shape, generator=g, dtype=torch.float64)
        return (values * float(spec.get("scale", 1.0))).to(dtype)
    values = torch.rand(shape, generator=g, dtype=torch.float64)
    return (values * (float(high) - float(low)) + float(low)).to(dtype)


def case_inputs(case: dict) -> tuple:
    """The arguments of one case, in the declared order, drawn from its seed."""
    g = torch.Generator().manual_seed(int(case["seed"]))
    args = []
    for spec in case["inputs"]:
        if "tensor" in spec:
            args.append(_tensor(spec, case, g))
        elif "int" in spec:
            args.append(_size(case, spec["int"]))
        elif "float" in spec:
            args.append(float(spec["float"]))
        else:  # "arange"
            start = _size(case, spec.get("start", 0))
            args.append(torch.arange(start, start + _size(case, spec["arange"])))
    return tuple(args)


def run_case(fn, case: dict):
    """One output is captured as "output"; several as a tuple, by name."""
    args, outputs = case_inputs(case), case["outputs"]
    if len(outputs) == 1:
        return run_and_capture(fn, *args)
    return capture_parts(fn, args, tuple(outputs))
