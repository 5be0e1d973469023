"""count-params: count a model's distinct parameters, shared tensors once.

The learner's function runs on GPT-2 shaped models (tied and untied) and on
seeded random models that hold the traps: a tied embedding/head, one Linear
registered twice, frozen parameters, an unused parameter, a 0-dim parameter
and buffers. One such model is fixed (seed 0), so every draw holds the traps
with the same values. It is also called on every submodule, so a wrong total
comes with a per-module breakdown showing where the count went astray.
"""

from __future__ import annotations

import random
from dataclasses import replace

import torch
import torch.nn as nn

from grading_engine.checks.result import CheckResult
from grading_engine.checks.values import ModuleCount, parameter_count
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.models import random_model
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int
from grading_engine.reference import GPT, empty_model, get_config

SLUG = "count-params"
ENTRY_POINT = "count_params"
SIGNATURE = "count_params(model) -> int"


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("gpt2, tied", False, config="gpt2", tied=True),
        new_case("tiny, untied", False, config="tiny", tied=False),
        new_case("gpt2, untied", True, config="gpt2", tied=False),
        new_case("mini, tied", True, config="mini", tied=True),
        # the traps with fixed values, so every draw catches each known slip
        new_case("fixed model with every trap", True, random_seed=0),
    ]
    return cases + [
        new_case(f"random model {i + 1}", True, random_seed=rng.randrange(2**31))
        for i in range(3)
    ]


# -- the models ---------------------------------------------------------------


def _model(case: dict, *, device: str) -> nn.Module:
    if "random_seed" in case:
        return random_model(case["random_seed"], device=device)
    config = get_config(case["config"], tied=case["tied"])
    if device == "meta":
        with torch.device("meta"):
            model = GPT(config)
        if config.tied:
            model.tie_weights()
        return model
    # Real (uninitialised) storage: learners may dedupe by data_ptr(), which
    # meta tensors do not have. Values do not matter for a count.
    return empty_model(config)


def _parts(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """The submodules a breakdown row is measured on, in forward order."""
    if isinstance(model, GPT):
        t = model.transformer
        parts = [("transformer.wte", t.wte), ("transformer.wpe", t.wpe)]
        parts += [(f"transformer.h.{i}", block) for i, block in enumerate(t.h)]
        return parts + [("transformer.ln_f", t.ln_f), ("lm_head", model.lm_head)]
    return list(model.named_children())


def _distinct(params) -> dict[int, nn.Parameter]:
    return {id(p): p for p in params}


# -- child --------------------------------------------------------------------


def run_case(fn, case: dict):
    model = _model(case, device="cpu")
    parts = _parts(model)  # taken before the call, in case it edits the model
    data = {"total": capture_int(fn(model))}
    data["parts"] = [[name, capture_int(fn(part))] for name, part in parts]
    return data, {}


# -- parent -------------------------------------------------------------------


def _short(name: str) -> str:
    module = name.rsplit(".", 1)[0] if "." in name else name
    return module.removeprefix("transformer.")


def _shared_label(model: nn.Module) -> str:
    groups: dict[int, list[str]] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(p), []).append(_short(name))
    shared = [names for names in groups.values() if len(names) > 1]
    if len(shared) == 1:
        return f"the shared {'/'.join(shared[0])} tensor"
    return "each shared tensor"


def _part_counts(model: nn.Module) -> list[tuple[str, int, str | None]]:
    """(part, its distinct parameters' numel, the part it shares with) in
    forward order, then the model's own parameters (shared with None)."""
    rows, owner = [], {}
    for name, part in _parts(model):
        params = _distinct(part.parameters())
        shared_with = next((owner[i] for i in params if i in owner), None)
        for i in params:
            owner.setdefault(i, name)
        rows.append((name, sum(p.numel() for p in params.values()), shared_with))
    direct = _distinct(model.parameters(recurse=False))
    if direct:
        numel = sum(p.numel() for p in direct.values())
        rows.append(("(the model's own parameters)", numel, None))
    return rows


@expectation
def counts(case: dict) -> dict:
    """The count, its breakdown and the numbers its slips give (shipped for
    the visible cases)."""
    model = _model(case, device="meta")
    distinct = _distinct(model.parameters())
    expected = sum(p.numel() for p in distinct.values())
    saved = model.state_dict(keep_vars=True).keys()
    every_use = sum(
        p.numel() for _, p in model.named_parameters(remove_duplicate=False)
    )
    return {
        "expected": expected,
        "parts": _part_counts(model),
        "shared_extra": every_use - expected,
        "shared_label": _shared_label(model),
        "buffer_numel": sum(b.numel() for b in model.buffers()),
        "persistent_buffer_numel": sum(
            b.numel() for name, b in model.named_buffers() if name in saved
        ),
        "state_dict_total": sum(v.numel() for v in model.state_dict().values()),
        "frozen_numel": sum(
            p.numel() for p in distinct.values() if not p.requires_grad
        ),
        "tensors": len(distinct),
    }


def _rows(parts: list, captured_parts) -> list[ModuleCount]:
    got = {}
    if isinstance(captured_parts, list):
        for item in captured_parts:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
                got[item[0]] = item[1]
    own = "(the model's own parameters)"
    return [
        ModuleCount(name, numel, None if name == own else got.get(name), shared)
        for name, numel, shared in parts
    ]


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    known = counts(case)
    expected = known["expected"]
    result = parameter_count(
        f"{case['name']}: parameter count",
        data.get("total"),
        expected=expected,
        rows=_rows(known["parts"], data.get("parts")),
        shared_extra=known["shared_extra"],
        shared_label=known["shared_label"],
        buffer_numel=known["buffer_numel"],
        state_dict_total=known["state_dict_total"],
        frozen_numel=known["frozen_numel"],
        hidden=case["hidden"],
    )
    result = _counted_tensors(result, data.get("total"), known["tensors"], expected)
    return [_counted_saved_buffers(result, data.get("total"), known, expected)]


def _counted_tensors(result: CheckResult, captured, tensors: int, expected: int):
    """Name a total that is the number of Parameter TENSORS, not elements."""
    got = captured.get("value") if isinstance(captured, dict) else None
    if result.passed or result.diagnosis or got != tensors or tensors == expected:
        return result
    hint = (
        f"{tensors:,} is the number of parameter TENSORS: count their elements, "
        "p.numel() for each, and add those up"
    )
    return _named(result, hint, "counted-tensors")


def _counted_saved_buffers(result: CheckResult, captured, known: dict, expected: int):
    """Name a total that adds the persistent buffers only: the state_dict
    deduplicated by storage (it holds those, not the non-persistent ones)."""
    got = captured.get("value") if isinstance(captured, dict) else None
    extra = known["persistent_buffer_numel"]
    if result.passed or result.diagnosis or not extra or got != expected + extra:
        return result
    hint = (
        f"you counted the buffers the state_dict saves too (+{extra:,}); "
        "buffers such as masks and running statistics are state, not "
        "parameters: count model.parameters()"
    )
    return _named(result, hint, "counted-buffers")


def _named(result: CheckResult, hint: str, diagnosis: str) -> CheckResult:
    """`result` naming `diagnosis`, its hint put before the breakdown table."""
    message = result.message
    if "\n\n" in message:
        message = message.replace("\n\n", f": {hint}\n\n", 1)
    else:
        message = f"{message}: {hint}"
    return replace(result, message=message, diagnosis=diagnosis)
