"""gpt2-forward: logits from a reference-named state dict.

For the small configs the child also calls the learner's function on probe
state dicts (grader.checks.divergence) and once more with the future tokens
changed, so the parent can say WHERE the forward pass first leaves the
reference and whether the future leaks into the past. The GPT-2 small case
checks the real shapes and shows the top-5 next tokens after "The sky is".
"""

from __future__ import annotations

import functools
import random

import torch
from torch.func import functional_call

from grader.checks.divergence import first_divergence, probe_state_dict, stages
from grader.checks.fingerprints import (
    GPT2_FLAWS,
    Variant,
    causal_property,
    fingerprint,
    gpt2_logits,
)
from grader.checks.result import CheckResult
from grader.checks.tensors import (
    call_learner,
    capture_tensor,
    check_no_error,
    compare_tensor,
    failed,
    top_tokens_report,
)
from grader.reference import build_model, get_config
from grader.reference.cache import reference_model
from grader.reference.tokenizer import get_encoding

SLUG = "gpt2-forward"
ENTRY_POINT = "gpt2_forward"
SIGNATURE = "gpt2_forward(idx, state_dict, n_head) -> Tensor"

SKY = [464, 6766, 318]  # "The sky is"
SKY_TEXT = "The sky is"
RTOL, ATOL = 1e-4, 1e-5

ERRORS = [
    (
        "cannot be multiplied",
        "transposed-weight",
        "the weights are in nn.Linear orientation (out, in): use "
        "F.linear(x, W, b), i.e. x @ W.T + b",
    ),
    (
        "transformer.h.",
        "hard-coded-n-layer",
        "a block key is missing: count the blocks from the state dict's keys "
        "(transformer.h.0 ... transformer.h.{n_layer-1}) instead of assuming "
        "GPT-2 small's 12",
    ),
]


def preload() -> None:
    _gpt2_reference_logits()
    get_encoding()  # the top-5 report decodes tokens


@functools.lru_cache(maxsize=1)
def _gpt2_reference_logits() -> torch.Tensor:
    with torch.no_grad():
        return reference_model("gpt2")(torch.tensor([SKY]))


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        {
            "name": "tiny, untied",
            "hidden": False,
            "config": "tiny",
            "tied": False,
            "b": 3,
            "t": 7,
            "seed": 1,
        },
        {"name": "gpt2 'The sky is'", "hidden": False, "config": "gpt2"},
        {
            "name": "hidden mini",
            "hidden": True,
            "config": "mini",
            "tied": True,
            "b": rng.randint(2, 3),
            "t": rng.randint(6, 20),
            "seed": rng.randrange(2**31),
        },
    ]
    n_head = rng.choice([2, 3, 4])
    cases.append(
        {
            "name": "hidden random width",
            "hidden": True,
            "config": "tiny",
            "overrides": {
                "n_layer": rng.randint(1, 3),
                "n_head": n_head,
                "n_embd": n_head * rng.choice([4, 6, 8]),
                "vocab_size": rng.choice([89, 131, 173]),
                "block_size": 24,
            },
            "tied": rng.random() < 0.5,
            "b": rng.randint(2, 3),
            "t": rng.randint(6, 14),
            "seed": rng.randrange(2**31),
        }
    )
    return cases


def _model(case: dict):
    """The reference GPT for a small case, with every parameter redrawn.

    GPT-2's own init leaves biases at 0 and LayerNorms at (1, 0), which
    would let a forgotten bias or LayerNorm affine pass; these draws make
    each part visible in the logits.
    """
    config = get_config(case["config"], **case.get("overrides", {}))
    model = build_model(config, seed=case["seed"], tied=case["tied"])
    g = torch.Generator().manual_seed(case["seed"] + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("wte.weight"):
                p.normal_(0.0, 0.02, generator=g)  # small: LayerNorm's eps shows
            elif name.endswith("wpe.weight"):
                p.normal_(0.0, 0.01, generator=g)
            elif "ln" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1, generator=g)
            else:  # linear weights (out, in): unit-scale activations
                p.normal_(0.0, p.shape[1] ** -0.5, generator=g)
    return model


def inputs(case: dict):
    """(idx, state_dict, n_head, future idx or None, model)."""
    if case["config"] == "gpt2":
        model = reference_model("gpt2")
        return torch.tensor([SKY]), model.state_dict(), model.config.n_head, None, model
    model = _model(case)
    g = torch.Generator().manual_seed(case["seed"] + 2)
    vocab, (b, t) = model.config.vocab_size, (case["b"], case["t"])
    idx = torch.randint(0, vocab, (b, t), generator=g)
    future = idx.clone()
    future[:, t // 2 :] = torch.randint(0, vocab, (b, t - t // 2), generator=g)
    return idx, model.state_dict(), model.config.n_head, future, model


def run_case(fn, case: dict):
    idx, sd, n_head, future, model = inputs(case)
    value, error = call_learner(fn, idx.clone(), dict(sd), n_head)
    info, tensor = capture_tensor(value)
    data, tensors = {"error": error, "output": info}, {}
    if tensor is None or future is None:
        return data, ({"output": tensor} if tensor is not None else {})
    tensors["output"] = tensor
    value, _ = call_learner(fn, future.clone(), dict(sd), n_head)
    if (tensor := capture_tensor(value)[1]) is not None:
        tensors["future"] = tensor
    for stage in stages(model.config.n_layer):
        probe = probe_state_dict(sd, model.config.n_layer, stage)
        value, _ = call_learner(fn, idx.clone(), probe, n_head)
        if (tensor := capture_tensor(value)[1]) is not None:
            tensors[f"probe.{stage}"] = tensor
    return data, tensors


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    raised = check_no_error(name, data.get("error"), patterns=ERRORS, hidden=hidden)
    if raised:
        return [raised]
    idx, sd, n_head, future, model = inputs(case)
    config = model.config
    if config.vocab_size == 50257:
        expected = _gpt2_reference_logits()
    else:
        with torch.no_grad():
            expected = model(idx)
    got = tensors.get("output")
    extra = ""
    if config.vocab_size == 50257 and got is not None and got.shape == expected.shape:
        extra = top_tokens_report(got[0, -1], expected[0, -1], prompt=SKY_TEXT)
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "vocab"),
        sizes={"n_embd": config.n_embd, "block_size": config.block_size},
        shape_hints={
            "replaced:vocab->n_embd": (
                "missing-projection",
                "did you return the hidden state instead of applying lm_head?",
            ),
        },
        rtol=RTOL,
        atol=ATOL,
        what="the logits",
        extra=extra,
        hidden=hidden,
    )
    if future is None or got is None or got.shape != expected.shape:
        return results
    match = None
    if failed(results):
        where = _localise(name, idx, sd, n_head, model, tensors, hidden)
        results.append(where)
        match = where if where.diagnosis else None
        if match is None:
            # No probe named a mistake; try the known ones on the whole model.
            variants = [
                Variant(diagnosis, lambda f=flaws: gpt2_logits(idx, sd, n_head, f))
                for diagnosis, flaws in GPT2_FLAWS
            ]
            match = fingerprint(
                name, got, expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
            )
            if match:
                results.append(match)
    results.append(
        causal_property(
            name,
            got,
            tensors.get("future"),
            rtol=RTOL,
            atol=ATOL,
            match=match,
            inputs="tokens",
            outputs="logits",
            hidden=hidden,
        )
    )
    return results


def _localise(name, idx, sd, n_head, model, tensors, hidden) -> CheckResult:
    n_layer = model.config.n_layer
    probe_dicts, references, probes = {}, {}, {}
    for stage in stages(n_layer):
        probe_dicts[stage] = probe = probe_state_dict(sd, n_layer, stage)
        if model.config.tied:  # functional_call re-ties lm_head to wte itself
            probe = {k: v for k, v in probe.items() if k != "lm_head.weight"}
        with torch.no_grad():
            references[stage] = functional_call(model, probe, (idx,))
        probes[stage] = tensors.get(f"probe.{stage}")
    return first_divergence(
        name,
        probes,
        references,
        probe_dicts,
        idx,
        n_head,
        rtol=RTOL,
        atol=ATOL,
        hidden=hidden,
    )
