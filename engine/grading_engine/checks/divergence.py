"""Find the first stage where a learner's GPT-2 forward leaves the reference.

The learner's function only returns logits, so the stages are isolated by
what goes IN: the child calls it again on probe state dicts in which some
output projections are zeroed. A block whose attention and MLP output
projections (weight and bias) are zero adds nothing to the residual stream,
so a correct forward treats it as the identity. The probes, in order:

    head         every block off, ln_f.weight zeroed: logits = ln_f.bias @ W.T
    embedding    every block off: embedding -> ln_f -> head
    h.{i}.attn   blocks < i whole, block i without its MLP, later blocks off
    h.{i}.mlp    blocks <= i whole, later blocks off (the last is the model)

The parent runs the reference on the same probes and names the first one
that differs. Both sides build probes with `probe_state_dict`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from grading_engine.checks.fingerprints import (
    GPT2_FLAWS,
    Variant,
    find_match,
    gpt2_logits,
)
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import error_report

_ATTN_OUT = ("attn.c_proj.weight", "attn.c_proj.bias")
_MLP_OUT = ("mlp.c_proj.weight", "mlp.c_proj.bias")


def stages(n_layer: int) -> list[str]:
    names = ["head", "embedding"]
    for i in range(n_layer):
        names += [f"h.{i}.attn", f"h.{i}.mlp"]
    return names


def probe_state_dict(state_dict: dict, n_layer: int, stage: str) -> dict:
    """A copy of `state_dict` (tensors shared) with the stage's zeroing."""
    sd = dict(state_dict)

    def zero(key):
        sd[key] = torch.zeros_like(state_dict[key])

    if stage in ("head", "embedding"):
        first_off, mlp_off = 0, None
    else:
        _, i, part = stage.split(".")
        first_off = int(i) + 1
        mlp_off = int(i) if part == "attn" else None
    for i in range(first_off, n_layer):
        for suffix in _ATTN_OUT + _MLP_OUT:
            zero(f"transformer.h.{i}.{suffix}")
    if mlp_off is not None:
        for suffix in _MLP_OUT:
            zero(f"transformer.h.{mlp_off}.{suffix}")
    if stage == "head":
        zero("transformer.ln_f.weight")
    return sd


def _where(stage: str) -> str:
    if stage == "head":
        return (
            "the output head differs: with every block switched off and "
            "ln_f.weight zeroed, the logits at each position should be "
            "ln_f.bias @ lm_head.weight.T"
        )
    if stage == "embedding":
        return (
            "the path embedding -> ln_f -> head differs with every block "
            "switched off (their output projections zeroed, so a correct "
            "block passes x through unchanged); the head alone matched, so "
            "look at the token + position embedding, ln_f, and whether each "
            "block adds to x (the residual)"
        )
    _, i, part = stage.split(".")
    if part == "attn":
        earlier = "the embedding" if i == "0" else f"blocks 0..{int(i) - 1}"
        return (
            f"block {i} attention differs \u2014 {earlier} matched, so look at "
            f"block {i}'s ln_1 and attention"
        )
    return (
        f"block {i} MLP differs \u2014 its attention matched, so look at "
        f"block {i}'s ln_2, c_fc, GELU and c_proj"
    )


def stage_variants(probe: dict, idx, n_head) -> list[Variant]:
    """The known GPT-2 mistakes, recomputed on one probe state dict."""
    return [
        Variant(diagnosis, lambda f=flaws, sd=probe: gpt2_logits(idx, sd, n_head, f))
        for diagnosis, flaws in GPT2_FLAWS
    ]


def _known_mistake(got, reference, variants: list[Variant], *, rtol, atol):
    """The known GPT-2 mistake (diagnosis, explanation) `got` matches on the
    same probe (`variants`: what each mistake gives there), or None."""
    match = find_match(got, reference, variants, rtol=rtol, atol=atol)
    return None if match is None else (match[0].diagnosis, match[0].text())


def first_divergence(
    name: str,
    probes: dict[str, torch.Tensor],
    references: dict[str, torch.Tensor],
    probe_dicts: dict[str, dict],
    idx: torch.Tensor,
    n_head: int,
    *,
    rtol: float,
    atol: float,
    hidden: bool = False,
) -> CheckResult:
    """Walk the probes in order; report the first that leaves the reference.

    `probes` are the learner's logits per stage, `references` the
    reference's, `probe_dicts` the state dicts they were computed from (so
    the known mistakes can be recomputed on the same probe).
    """
    return divergence(
        name,
        probes,
        references,
        lambda stage: stage_variants(probe_dicts[stage], idx, n_head),
        rtol=rtol,
        atol=atol,
        hidden=hidden,
    )


def divergence(
    name: str,
    probes: dict[str, torch.Tensor],
    references: dict[str, torch.Tensor],
    mistakes: Callable[[str], list[Variant]],
    *,
    rtol: float,
    atol: float,
    hidden: bool = False,
) -> CheckResult:
    """first_divergence's walk, given what the known mistakes give at a stage
    (`mistakes(stage)`), whoever computed it: the learner edition gets them
    from the server (grading_engine.expected)."""
    check = f"{name}: first divergence"
    for stage, reference in references.items():
        got = probes.get(stage)
        if got is None or got.shape != reference.shape:
            shape = "nothing" if got is None else str(tuple(got.shape))
            return fail(
                check,
                f"called with some weights zeroed (probe {stage!r}), your "
                f"function returned {shape} instead of logits of shape "
                f"{tuple(reference.shape)}: it must work for any weights, zeros "
                "included",
                hidden=hidden,
            )
        bad, max_abs, *_ = error_report(got, reference, rtol, atol)
        if bad == 0:
            continue
        message = f"{_where(stage)} (max abs error {max_abs:.1e})"
        known = _known_mistake(got, reference, mistakes(stage), rtol=rtol, atol=atol)
        diagnosis = None
        if known is not None:
            diagnosis, text = known
            message += f": {text}"
        return fail(check, message, diagnosis=diagnosis, hidden=hidden)
    return CheckResult(
        name=check,
        passed=True,
        message="every stage matches the reference",
        hidden=hidden,
    )
