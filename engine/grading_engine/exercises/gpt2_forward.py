"""gpt2-forward: logits from a reference-named state dict.

For the small configs the child also calls the learner's function on probe
state dicts (grading_engine.checks.divergence) and once more with the future tokens
changed, so the parent can say WHERE the forward pass first leaves the
reference and whether the future leaks into the past. The GPT-2 small case
checks the real shapes and shows the top-5 next tokens after "The sky is".
"""

from __future__ import annotations

import functools
import random

import torch
from torch.func import functional_call

from grading_engine.checks.divergence import (
    divergence,
    probe_state_dict,
    stage_variants,
    stages,
)
from grading_engine.checks.fingerprints import (
    GPT2_FLAWS,
    Flaws,
    Variant,
    causal_property,
    computed,
    fingerprint,
    gpt2_logits,
    shipped_variants,
)
from grading_engine.checks.in_place import input_changes
from grading_engine.checks.learner_calls import (
    call_learner,
    capture_tensor,
    run_with_future,
)
from grading_engine.checks.result import CheckResult
from grading_engine.checks.tensors import (
    case_error,
    compare_tensor,
    failed,
    top_tokens_report,
)
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.models import case_config, draw_width
from grading_engine.exercises.kit.sky import SKY, SKY_TEXT
from grading_engine.expected import expectation
from grading_engine.reference import build_model
from grading_engine.reference.cache import reference_model
from grading_engine.reference.tokenizer import get_encoding

SLUG = "gpt2-forward"
ENTRY_POINT = "gpt2_forward"
SIGNATURE = "gpt2_forward(idx, state_dict, n_head) -> Tensor"

RTOL, ATOL = 1e-4, 1e-5
CAUSAL_WORDS = ("tokens", "logits")  # what changes, what must not

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
    reference_model("gpt2")  # the GPT-2 small case's state dict
    get_encoding()  # the top-5 report decodes tokens


@functools.lru_cache(maxsize=1)
def _gpt2_reference_logits() -> torch.Tensor:
    with torch.no_grad():
        return reference_model("gpt2")(torch.tensor([SKY]))


def make_cases(seed: int) -> list[dict]:
    """Every draw reaches the context limit: the mini case runs one token
    short of its block_size (32), the random-width case a full block (24),
    so a mask or position slice that is off by one at the limit shows."""
    rng = random.Random(seed)
    return [
        new_case("tiny, untied", False, config="tiny", tied=False, b=3, t=7, seed=1),
        new_case("gpt2 'The sky is'", False, config="gpt2"),
        new_case(
            "hidden mini, t = block_size - 1",
            True,
            config="mini",
            tied=True,
            b=rng.randint(2, 3),
            t=31,
            seed=rng.randrange(2**31),
        ),
        new_case(
            "hidden random width, t = block_size",
            True,
            config="tiny",
            overrides=draw_width(rng, (1, 3), block_size=24),
            tied=rng.random() < 0.5,
            b=rng.randint(2, 3),
            t=24,
            seed=rng.randrange(2**31),
        ),
    ]


def _model(case: dict):
    """The reference GPT for a small case, with every parameter redrawn.

    GPT-2's own init leaves biases at 0 and LayerNorms at (1, 0), which
    would let a forgotten bias or LayerNorm affine pass; these draws make
    each part visible in the logits.
    """
    model = build_model(case_config(case), seed=case["seed"], tied=case["tied"])
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
    future_args = None if future is None else (future.clone(), dict(sd), n_head)
    data, tensors = run_with_future(fn, (idx.clone(), dict(sd), n_head), future_args)
    if "output" not in tensors or future is None:
        return data, tensors
    for stage in stages(model.config.n_layer):
        probe = probe_state_dict(sd, model.config.n_layer, stage)
        value, _ = call_learner(fn, idx.clone(), probe, n_head)
        if (tensor := capture_tensor(value)[1]) is not None:
            tensors[f"probe.{stage}"] = tensor
    return data, tensors


def _small(case: dict) -> bool:
    """A small case: the child also probed it, and its future tokens change."""
    return case["config"] != "gpt2"


@expectation
def expected_logits(case: dict) -> dict:
    """The logits and the config's sizes (shipped for the visible cases)."""
    idx, _, _, _, model = inputs(case)
    config = model.config
    if _small(case):
        with torch.no_grad():
            logits = model(idx)
    else:
        logits = _gpt2_reference_logits()
    return {
        "logits": logits,
        "n_embd": config.n_embd,
        "block_size": config.block_size,
    }


_LAYOUTS = [
    (
        "view-without-transpose",
        Flaws(split_reshaped=True, merge_viewed=True),
        "your logits match heads split with q.reshape(b, n_head, t, head_size) "
        "straight from (b, t, n_embd) and merged back the same way: that reads "
        "the numbers in memory order, so a head gets whole tokens, not its "
        "channels. Split with view(b, t, n_head, head_size).transpose(1, 2) "
        "and merge with transpose(1, 2) before the view to (b, t, n_embd)",
    ),
    (
        "view-without-transpose",
        Flaws(split_reshaped=True),
        "your logits match heads split with q.reshape(b, n_head, t, head_size) "
        "straight from (b, t, n_embd): that reads the numbers in memory order, "
        "so a head gets whole tokens, not its channels. Split with "
        "view(b, t, n_head, head_size).transpose(1, 2)",
    ),
    (
        "merge-without-transpose",
        Flaws(merge_viewed=True),
        "your logits match heads merged with a view of (b, n_head, t, "
        "head_size) straight to (b, t, n_embd): that lays the heads' outputs "
        "out in memory order, mixing positions. transpose(1, 2) back to "
        "(b, t, n_head, head_size) first, then view as (b, t, n_embd)",
    ),
]


def _gpt2_variants(idx, sd, n_head) -> list[Variant]:
    """This exercise's known mistakes on top of the shared GPT2_FLAWS: heads
    split or merged in memory order, each with its own message."""
    return [
        Variant(
            diagnosis,
            lambda flaws=flaws: gpt2_logits(idx, sd, n_head, flaws),
            message,
        )
        for diagnosis, flaws, message in _LAYOUTS
    ]


@expectation(when=_small)
def known_mistakes(case: dict) -> list:
    """What the known whole-model mistakes give (shipped likewise)."""
    idx, sd, n_head, _, _ = inputs(case)
    return computed(
        [
            Variant(diagnosis, lambda f=flaws: gpt2_logits(idx, sd, n_head, f))
            for diagnosis, flaws in GPT2_FLAWS
        ]
        + _gpt2_variants(idx, sd, n_head)
    )


@expectation(when=_small)
def stage_references(case: dict) -> dict:
    """The reference's logits on each probe state dict (shipped likewise)."""
    idx, sd, _, _, model = inputs(case)
    n_layer, references = model.config.n_layer, {}
    for stage in stages(n_layer):
        probe = probe_state_dict(sd, n_layer, stage)
        if model.config.tied:  # functional_call re-ties lm_head to wte itself
            probe = {k: v for k, v in probe.items() if k != "lm_head.weight"}
        with torch.no_grad():
            references[stage] = functional_call(model, probe, (idx,))
    return references


def _stages(case: dict) -> list[str]:
    return stages(case_config(case).n_layer)


@expectation(when=_small, keys=_stages)
def stage_mistakes(case: dict, stage: str) -> list:
    """What the known mistakes give on one probe (shipped likewise)."""
    idx, sd, n_head, _, model = inputs(case)
    probe = probe_state_dict(sd, model.config.n_layer, stage)
    return computed(
        stage_variants(probe, idx, n_head) + _gpt2_variants(idx, probe, n_head)
    )


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The answer's checks, and one for an argument changed in place."""
    changed = input_changes(case["name"], data, hidden=bool(case["hidden"]))
    return changed + _check_answer(case, data, tensors)


def _check_answer(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data, ERRORS):
        return raised
    shipped = expected_logits(case)
    expected = shipped["logits"]
    got = tensors.get("output")
    extra = ""
    if not _small(case):
        extra = top_tokens_report(got, expected, prompt=SKY_TEXT)
    results = compare_tensor(
        name,
        data.get("output"),
        got,
        expected,
        axes=("batch", "time", "vocab"),
        sizes={"n_embd": shipped["n_embd"], "block_size": shipped["block_size"]},
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
    if not _small(case) or got is None or got.shape != expected.shape:
        return results
    if failed(results):
        results += _name_the_mistake(name, case, expected, tensors, hidden)
    return results + [
        causal_property(
            name,
            got,
            tensors.get("future"),
            results,
            CAUSAL_WORDS,
            rtol=RTOL,
            atol=ATOL,
            hidden=hidden,
        )
    ]


def _name_the_mistake(name, case, expected, tensors, hidden):
    """Where the forward first leaves the reference and, when the probes
    name no mistake, the known mistake the whole output matches."""
    where = _localise(name, case, tensors, hidden)
    if where.diagnosis:
        return [where]
    variants = shipped_variants(known_mistakes(case))
    match = fingerprint(
        name, tensors["output"], expected, variants, rtol=RTOL, atol=ATOL, hidden=hidden
    )
    return [where, match] if match else [where]


def _localise(name, case, tensors, hidden) -> CheckResult:
    references = stage_references(case)
    probes = {stage: tensors.get(f"probe.{stage}") for stage in references}
    return divergence(
        name,
        probes,
        references,
        lambda stage: shipped_variants(stage_mistakes(case, stage)),
        rtol=RTOL,
        atol=ATOL,
        hidden=hidden,
    )
