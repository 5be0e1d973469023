"""checkpoint-bytes: the tensor bytes `torch.save(model.state_dict())` writes.

torch.save stores each storage once, so a tied or reused Parameter costs its
bytes once even though state_dict lists it under every name; persistent
buffers are saved, non-persistent ones are not; every tensor costs
numel x element_size in its own dtype.
"""

from __future__ import annotations

import random

import torch
from torch import nn

from grading_engine.checks.judges import int_check
from grading_engine.exercises.kit.models import random_model
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int
from grading_engine.reference import GPT, empty_model, get_config

SLUG = "checkpoint-bytes"
ENTRY_POINT = "checkpoint_bytes"
SIGNATURE = "checkpoint_bytes(model) -> int"


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {"name": "gpt2, tied", "hidden": False, "config": "gpt2", "masks": False},
        {"name": "tiny with causal-mask buffers", "hidden": False,
         "config": "tiny", "masks": True},
        {"name": "mini with causal-mask buffers", "hidden": True,
         "config": "mini", "masks": True},
    ]  # fmt: skip
    for i in range(3):
        cases.append(
            {
                "name": f"random model {i + 1}",
                "hidden": True,
                "random_seed": rng.randrange(2**31),
                "half_frozen": i != 1,
            }
        )
    # Fixed structure (seed 0): an fp16 layer and a non-persistent buffer, and
    # every slip a different number, so each known slip fails in every draw.
    cases.append(
        {
            "name": "fixed model, half frozen",
            "hidden": True,
            "random_seed": 0,
            "half_frozen": True,
        }
    )
    return cases


def build(case: dict, *, device: str) -> nn.Module:
    """The case's model; the parent builds it on meta (shapes and identity only)."""
    if "random_seed" in case:
        model = random_model(case["random_seed"], device=device)
        if case["half_frozen"]:
            model.frozen.half()  # a mixed-dtype checkpoint
        return model
    config = get_config(case["config"])
    if device == "meta":
        with torch.device("meta"):
            model = GPT(config)
        model.tie_weights()
    else:
        model = empty_model(config)
    if case["masks"]:
        t = config.block_size
        for block in model.transformer.h:  # nanoGPT's non-flash causal mask
            with torch.device(device):
                mask = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
            block.attn.register_buffer("bias", mask)
    return model


def run_case(fn, case: dict):
    return {"result": capture_int(fn(build(case, device="cpu")))}, {}


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _buffers(model: nn.Module, *, persistent: bool | None) -> list[torch.Tensor]:
    found = {}
    for module in model.modules():
        for name, buf in module.named_buffers(recurse=False):
            if buf is None:
                continue
            is_persistent = name not in module._non_persistent_buffers_set
            if persistent is None or persistent == is_persistent:
                found[id(buf)] = buf
    return list(found.values())


def _sizes(model: nn.Module) -> dict[str, int]:
    params = list(model.parameters())  # distinct Parameters
    saved = params + _buffers(model, persistent=True)
    with_names = [
        p for _, p in model.named_parameters(remove_duplicate=False)
    ] + _buffers(model, persistent=True)
    return {
        "right": _nbytes(saved),
        "every_name": _nbytes(with_names),
        "all_buffers": _nbytes(params + _buffers(model, persistent=None)),
        "params_only": _nbytes(params),
        "fp32": 4 * sum(t.numel() for t in saved),
        "elements": sum(t.numel() for t in saved),
    }


def _slips(sizes: dict[str, int]) -> list[tuple[int, str, str]]:
    return [
        (
            sizes["every_name"],
            "counted-shared-twice",
            "state_dict() lists a shared tensor under every name (a tied head, "
            "a reused layer); torch.save writes its storage once",
        ),
        (
            sizes["all_buffers"],
            "saved-non-persistent-buffers",
            "buffers registered with persistent=False are not in state_dict() "
            "and are not saved",
        ),
        (
            sizes["params_only"],
            "forgot-buffers",
            "persistent buffers (masks, running statistics) are saved with the "
            "parameters",
        ),
        (
            sizes["fp32"],
            "assumed-fp32",
            "each tensor costs element_size() bytes of its own dtype; not all "
            "of them are 4-byte floats",
        ),
        (
            sizes["elements"],
            "counted-elements",
            "that is the number of elements; multiply each by element_size()",
        ),
    ]


@expectation
def expected(case: dict) -> dict:
    """The answer and its known slips (shipped for the visible cases)."""
    sizes = _sizes(build(case, device="meta"))
    return {"value": sizes["right"], "slips": _slips(sizes)}


check_case = int_check("bytes", expected)
