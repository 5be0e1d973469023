"""The child's half of every authored exercise: build a case's inputs, call.

An authored exercise (grading_engine.authored) is a declaration, not a
module of its own, so one harness runs all of them. Each case it is handed
carries everything needed to build its inputs (the input specs, the case's
sizes and seed, the author's generator) and what to capture (the returned
outputs' names, which are modules to count, which inputs' gradients), so
the child never needs the declaration, and the reference, the known
mistakes and the learner's code, each run in a job of their own, get the
same inputs.

The generator is the author's code and runs here, in the sandbox, before
the function; the learner's job holds it too (it makes inputs, it is not
an answer, and `course check` runs it for the visible cases).
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import nn

from grading_engine.checks.learner_calls import call_learner, capture_tensor
from grading_engine.reference.model import build_model, get_config

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


def _gpt2(spec: dict, case: dict):
    """A piece of the course's GPT-2, its weights seeded by the case."""
    config = replace(get_config("tiny"), **spec["config"])
    if spec["gpt2"] == "config":
        return config
    model = build_model(config, seed=int(case["seed"]) % 2**31)
    block = model.transformer.h[0]
    return {
        "model": model,
        "block": block,
        "attention": block.attn,
        "mlp": block.mlp,
    }[spec["gpt2"]]


def _generated(case: dict, g: torch.Generator) -> dict:
    """What the author's make_inputs(sizes, generator) gives, by input name."""
    namespace: dict = {"__name__": "generator"}
    exec(compile(case["generator"], "<generator>", "exec"), namespace)  # noqa: S102
    made = namespace["make_inputs"](dict(case["sizes"]), g)
    wanted = [spec["name"] for spec in case["inputs"] if "generated" in spec]
    if not isinstance(made, dict) or set(wanted) - set(made):
        raise ValueError(
            f"the generator's make_inputs must return a dict with {', '.join(wanted)}"
        )
    return made


def case_inputs(case: dict) -> tuple:
    """The arguments of one case, in the declared order, drawn from its seed."""
    g = torch.Generator().manual_seed(int(case["seed"]))
    made = _generated(case, g) if case.get("generator") else {}
    args = []
    for spec in case["inputs"]:
        if "tensor" in spec:
            args.append(_tensor(spec, case, g))
        elif "int" in spec:
            args.append(_size(case, spec["int"]))
        elif "float" in spec:
            args.append(float(spec["float"]))
        elif "gpt2" in spec:
            args.append(_gpt2(spec, case))
        elif "generated" in spec:
            args.append(made[spec["name"]])
        else:  # "arange"
            start = _size(case, spec.get("start", 0))
            args.append(torch.arange(start, start + _size(case, spec["arange"])))
    return tuple(args)


def _parameter_count(value):
    """A returned module becomes its count of distinct parameter elements (a
    shared Parameter once); anything else is captured as it is."""
    if not isinstance(value, nn.Module):
        return value
    unique = {id(p): p.numel() for p in value.parameters()}
    return torch.tensor(sum(unique.values()), dtype=torch.int64)


def _backward(parts: list, case: dict) -> str | None:
    """Backpropagate a seeded weighting of the returned float tensors (the
    same weights for every job of the case); why not, or None."""
    g = torch.Generator().manual_seed(int(case["seed"]) + 1)
    total = None
    for part in parts:
        if isinstance(part, torch.Tensor) and part.is_floating_point():
            # Drawn for every float part, carrying a gradient or not, so the
            # learner's job and the reference's draw the same weights.
            weights = torch.randn(part.shape, generator=g, dtype=torch.float64)
            if part.requires_grad:
                term = (part * weights.to(part.dtype)).sum()
                total = term if total is None else total + term
    if total is None:
        return "no returned tensor carries a gradient back to the inputs"
    try:
        total.backward()
    except Exception as exc:  # noqa: BLE001 - the learner's graph
        return f"the backward pass failed: {type(exc).__name__}: {exc}"[:300]
    return None


def run_case(fn, case: dict):
    """One returned output is captured as "output"; several (a tuple) by
    name. A module to count becomes its parameter count; each gradient asked
    for is the input's .grad after a backward pass, captured by its name."""
    args, outputs = case_inputs(case), case["outputs"]
    counted = set(case.get("parameters", ()))
    gradients = case.get("gradients", {})
    for index in set(gradients.values()):
        if isinstance(args[index], torch.Tensor) and args[index].is_floating_point():
            args[index].requires_grad_(True)
    value, error = call_learner(fn, *args)
    data: dict = {"error": error}
    if len(outputs) == 1:
        keys, parts = ["output"], [value]
    else:
        keys, data["kind"] = outputs, capture_tensor(value)[0]
        fits = isinstance(value, (tuple, list)) and len(value) == len(outputs)
        parts = list(value) if fits else None
        if fits:
            data["length"] = len(outputs)
    tensors: dict = {}
    for key, name, part in zip(keys, outputs, parts or (), strict=False):
        data[key], tensor = capture_tensor(
            _parameter_count(part) if name in counted else part
        )
        if tensor is not None:
            tensors[key] = tensor
    if gradients and error is None and parts is not None:
        why = _backward(parts, case)
        for name, index in gradients.items():
            grad = getattr(args[index], "grad", None) if why is None else None
            data[name], tensor = capture_tensor(grad)
            if tensor is not None:
                tensors[name] = tensor
            elif why:
                data[name]["why"] = why
    return data, tensors
