"""tie-weights: make lm_head and wte share one Parameter, in place.

Two kinds of case. The structural one runs on the untied GPT-2 small and
reads identities after the call: `is`, data_ptr, storage, the distinct count.
The gradient one runs forward and backward on a small untied config: a true
tie accumulates the embedding's and the head's gradients into one .grad,
which aliasing `.data` or copying the tensor cannot fake. The parent
recomputes both gradient parts on its own copy of the model.
"""

from __future__ import annotations

import random

import torch
from torch import nn
from torch.nn import functional as F

from grading_engine.checks.in_place import MODEL_CHANGE_KINDS
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.values import exact_int, tied_gradient, tied_identity
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int, type_name
from grading_engine.reference import build_model, get_config, gpt2_parameter_count
from grading_engine.reference.cache import model_to_change, reference_model

SLUG = "tie-weights"
ENTRY_POINT = "tie_weights"
SIGNATURE = "tie_weights(model) -> None"
# Tying is the exercise: check_case judges the structure left behind.
MODEL_CHANGES = MODEL_CHANGE_KINDS

_STRUCTURE_MODEL = ("gpt2", 0)  # config name, seed


def preload() -> None:
    """Build the untied GPT-2 small the structural case ties (seconds, once)."""
    name, seed = _STRUCTURE_MODEL
    reference_model(name, tied=False, seed=seed)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    name, model_seed = _STRUCTURE_MODEL
    cases = [
        new_case(
            "gpt2 structure", False, kind="structure", config=name, seed=model_seed
        )
    ]
    for label, config, hidden in (("tiny", "tiny", False), ("mini", "mini", True)):
        c = get_config(config)
        # A visible case draws from its position, so it is the same every attempt.
        draw = rng if hidden else random.Random(len(cases))
        steps = draw.randint(4, c.block_size)
        cases.append(
            new_case(
                f"{label} gradient",
                hidden,
                kind="gradient",
                config=config,
                seed=draw.randrange(2**31),
                idx=_token_rows(draw, c.vocab_size, steps),
                targets=_token_rows(draw, c.vocab_size, steps),
            )
        )
    return cases


def _token_rows(draw: random.Random, vocab_size: int, steps: int) -> list:
    """A batch of two rows of `steps` token ids (the inputs, or the targets)."""
    return [[draw.randrange(vocab_size) for _ in range(steps)] for _ in range(2)]


# -- child --------------------------------------------------------------------


def _facts(model) -> dict:
    """What the model looks like after the learner's call, as plain data."""
    wte = model.transformer.wte.weight
    head = model.lm_head.weight
    same_shape = tuple(head.shape) == tuple(wte.shape)
    registered = {id(p) for p in model.parameters()}
    return {
        "same_object": head is wte,
        "same_data_ptr": head.data_ptr() == wte.data_ptr(),
        "same_storage": head.untyped_storage().data_ptr()
        == wte.untyped_storage().data_ptr(),
        "equal_values": bool(same_shape and torch.equal(head.detach(), wte.detach())),
        "head_shape": list(head.shape),
        "wte_shape": list(wte.shape),
        "head_type": type_name(head),
        "head_registered": id(head) in registered,
        "distinct": capture_int(sum(p.numel() for p in model.parameters())),
        "head_module": type_name(model.lm_head),
        "head_is_linear": isinstance(model.lm_head, nn.Linear),
    }


def run_case(fn, case: dict):
    if case["kind"] == "structure":
        # The learner ties (or breaks) it in place: the cached model itself
        # in a job's own process, a copy where the cache outlives the call.
        model = model_to_change(case["config"], tied=False, seed=case["seed"])
    else:
        model = build_model(case["config"], tied=False, seed=case["seed"])
    fn(model)  # tying is in place; a return value is ignored
    data = _facts(model)
    if (
        case["kind"] == "structure"
        or data["head_shape"] != data["wte_shape"]
        or not data["head_is_linear"]
    ):
        # A mis-shaped head, or a head module that is no longer a Linear (the
        # embedding module itself), cannot score hidden states; the checks
        # say why.
        return data, {}

    idx, targets = torch.tensor(case["idx"]), torch.tensor(case["targets"])
    model.zero_grad(set_to_none=True)
    logits = model(idx)
    F.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()
    tensors = {
        "wte": model.transformer.wte.weight.detach(),
        "head": model.lm_head.weight.detach(),
    }
    grads = {
        "wte_grad": model.transformer.wte.weight.grad,
        "head_grad": model.lm_head.weight.grad,
    }
    tensors.update({key: g for key, g in grads.items() if g is not None})
    return data, tensors


# -- parent -------------------------------------------------------------------


def _structure(case: dict) -> bool:
    return case["kind"] == "structure"


def _gradient(case: dict) -> bool:
    return case["kind"] == "gradient"


@expectation(when=_structure)
def structure_counts(case: dict) -> dict:
    """The head's size and the model's distinct parameters, tied and untied
    (shipped for the visible cases)."""
    config = get_config(case["config"])
    shape = (config.vocab_size, config.block_size, config.n_embd, config.n_layer)
    return {
        "head_numel": config.vocab_size * config.n_embd,
        "tied_total": gpt2_parameter_count(*shape, tied=True),
        "untied_total": gpt2_parameter_count(*shape, tied=False),
    }


def _structure_checks(case: dict, data: dict) -> list[CheckResult]:
    hidden = case["hidden"]
    name = case["name"]
    counts = structure_counts(case)
    head_numel = counts["head_numel"]
    tied_total, untied_total = counts["tied_total"], counts["untied_total"]

    def why(got: int):
        if got == untied_total:
            return None, "the head still holds a tensor of its own"
        return None

    checks = [
        tied_identity(
            f"{name}: one shared weight", data, head_numel=head_numel, hidden=hidden
        ),
        exact_int(
            f"{name}: distinct parameters",
            data.get("distinct"),
            tied_total,
            hidden=hidden,
            diagnose=why,
        ),
    ]
    is_parameter = data.get("head_type") == "torch.nn.parameter.Parameter"
    registered = data.get("head_registered") is True
    checks.append(
        CheckResult(
            f"{name}: the shared weight is a registered Parameter",
            is_parameter and registered,
            "the shared weight is an nn.Parameter that model.parameters() yields"
            if is_parameter and registered
            else f"lm_head.weight is a {data.get('head_type')} "
            + ("" if registered else "that model.parameters() does not yield ")
            + "after your call: an optimizer would not train it; share the "
            "nn.Parameter object itself",
            expected="nn.Parameter, registered",
            got=str(data.get("head_type")),
            hidden=hidden,
        )
    )
    return checks


def _head_module_check(name: str, data: dict, hidden: bool) -> CheckResult | None:
    """A failed check when lm_head is no longer an nn.Linear (None otherwise).

    `model.lm_head = model.transformer.wte` makes `lm_head.weight is
    wte.weight` true, but the head is then an embedding lookup: it cannot
    project hidden states to logits.
    """
    if data.get("head_is_linear") is not False:
        return None
    return fail(
        f"{name}: the head is still a Linear layer",
        f"model.lm_head is now a {data.get('head_module')}: you replaced the head "
        "module instead of sharing its weight. The tie shares the Parameter, "
        "not the module: an embedding looks rows up by token id and cannot "
        "score the final hidden states. Keep the nn.Linear and assign "
        "model.lm_head.weight = model.transformer.wte.weight",
        expected="nn.Linear sharing wte's weight",
        got=str(data.get("head_module")),
        diagnosis="head-module-replaced",
        hidden=hidden,
    )


def _gradient_parts(case: dict, values: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Embedding-use and head-use gradients when both weights equal `values`.

    Computed on an UNTIED model, so autograd keeps the two uses apart; a
    correct tie must sum them.
    """
    model = build_model(case["config"], tied=False, seed=case["seed"])
    with torch.no_grad():
        model.transformer.wte.weight.copy_(values)
        model.lm_head.weight.copy_(values)
    idx, targets = torch.tensor(case["idx"]), torch.tensor(case["targets"])
    logits = model(idx)
    F.cross_entropy(logits.flatten(0, 1), targets.flatten()).backward()
    return model.transformer.wte.weight.grad, model.lm_head.weight.grad


@expectation(when=_gradient)
def weights_before(case: dict) -> dict:
    """The untied model's two weights before the call (shipped for the
    visible cases)."""
    model = build_model(case["config"], tied=False, seed=case["seed"])
    return {
        "wte": model.transformer.wte.weight.detach(),
        "head": model.lm_head.weight.detach(),
    }


@expectation(when=_gradient, keys=lambda case: ["wte", "head"])
def gradient_parts(case: dict, start: str) -> tuple[torch.Tensor, ...]:
    """The two gradient parts when the tie keeps `start`'s values."""
    return _gradient_parts(case, weights_before(case)[start])  # one build: one_check


def _gradient_checks(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    name, hidden = case["name"], case["hidden"]
    before = weights_before(case)
    original_wte, original_head = before["wte"], before["head"]
    identity = tied_identity(
        f"{name}: one shared weight",
        data,
        head_numel=original_wte.numel(),
        hidden=hidden,
    )
    replaced = _head_module_check(name, data, hidden)
    if replaced is not None:
        return [identity, replaced]
    wte = tensors.get("wte")
    if wte is None:
        return [
            identity,
            fail(
                f"{name}: gradient of the shared weight",
                "the forward pass could not run: lm_head.weight must keep the "
                "embedding's (vocab_size, n_embd) shape",
                hidden=hidden,
            ),
        ]
    # Either direction is a valid tie: the shared values are wte's or head's.
    values = None
    if isinstance(wte, torch.Tensor) and wte.shape == original_wte.shape:
        for start, candidate in (("wte", original_wte), ("head", original_head)):
            if torch.equal(wte, candidate):
                values = start
    if values is None:
        return [
            identity,
            fail(
                f"{name}: gradient of the shared weight",
                "after your call transformer.wte.weight holds neither the "
                "embedding's nor the head's original values: tying should share "
                "a weight, not change it (no re-initialising or rescaling the "
                "tied weight)",
                diagnosis="tied-weight-changed",
                hidden=hidden,
            ),
        ]
    embedding_part, head_part = gradient_parts(case, values)
    gradient = tied_gradient(
        f"{name}: gradient of the shared weight",
        got_wte_grad=tensors.get("wte_grad"),
        got_head_grad=tensors.get("head_grad"),
        embedding_part=embedding_part,
        head_part=head_part,
        same_storage=data.get("same_storage") is True,
        hidden=hidden,
    )
    return [identity, gradient]


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    if case["kind"] == "structure":
        checks = _structure_checks(case, data)
        replaced = _head_module_check(case["name"], data, case["hidden"])
        return checks if replaced is None else [*checks, replaced]
    return _gradient_checks(case, data, tensors)
