"""scale-residual-init: re-initialise the residual projections, GPT-2 style.

The learner gets a model whose every Linear and Embedding weight was drawn
from normal(0, 0.02) and must redraw (or rescale) the two projections that
write into the residual stream, `attn.c_proj.weight` and `mlp.c_proj.weight`
of every block, to std 0.02 / sqrt(2 * n_layer), leaving everything else
untouched. The draws are the learner's, so the parent judges statistics:
each projection's sample std against the target, and every other tensor
bit for bit against the model it handed over.
"""

from __future__ import annotations

import math
import random
import re

import torch

from grading_engine.checks.learner_calls import call_learner, capture_tensor
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.reference import build_model, get_config

SLUG = "scale-residual-init"
ENTRY_POINT = "scale_residual_init"
SIGNATURE = "scale_residual_init(model) -> None"
# Scaling rewrites values in place; replacing or untying a Parameter is a bug.
MODEL_CHANGES = frozenset({"values"})

BASE_STD = 0.02
REL_TOL = 0.08  # >= 7 standard errors of a sample std at 4,096 elements
_PROJ = re.compile(r"^transformer\.h\.(\d+)\.(attn|mlp)\.c_proj\.weight$")
_KEY = re.compile(r"[A-Za-z0-9_.]{1,100}")

ERRORS = [
    (
        "a leaf Variable that requires grad",
        "in-place-on-leaf",
        "parameters require grad, so autograd refuses in-place writes to them: "
        "wrap the loop in `with torch.no_grad():` or use "
        "torch.nn.init.normal_(p, mean=0.0, std=...), which does that for you",
    ),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("12 layers, d=64", False, n_layer=12, n_embd=64, seed=1),
        new_case("2 layers, d=64", False, n_layer=2, n_embd=64, seed=2),
    ]
    return cases + [
        new_case(
            f"hidden {i + 1}",
            True,
            n_layer=rng.choice([3, 5, 6, 8, 16, 24]),
            n_embd=rng.choice([64, 96]),
            seed=rng.randrange(2**31),
        )
        for i in range(2)
    ]


def naive_model(case: dict):
    """A model with every weight ~ normal(0, 0.02): no residual scaling yet."""
    config = get_config(
        "tiny", n_layer=case["n_layer"], n_embd=case["n_embd"], n_head=4
    )
    model = build_model(config, seed=case["seed"])
    g = torch.Generator().manual_seed(case["seed"] + 1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if _PROJ.match(name):
                p.normal_(0.0, BASE_STD, generator=g)
    return model


def run_case(fn, case: dict):
    model = naive_model(case)
    value, error = call_learner(fn, model)
    data = {"error": error, "returned": capture_tensor(value)[0]["type"]}
    tensors, names = {}, []
    for name, p in list(model.named_parameters())[:2000]:
        names.append(name[:200])
        _, tensor = capture_tensor(p)
        if tensor is not None and _KEY.fullmatch(name):
            tensors[name] = tensor
    data["names"] = names
    return data, tensors


def _known_ratios(n_layer: int) -> list[tuple[float, str, str]]:
    """The std ratios (got / target) of the usual slips, with their hints."""
    target = 1 / math.sqrt(2 * n_layer)
    known = [
        (
            1 / target,
            "not-rescaled",
            "it still has std 0.02: it was not re-initialised",
        ),
        (
            math.sqrt(2),
            "forgot-factor-2",
            "its std is 0.02 / sqrt(n_layer): each block has TWO residual "
            "projections (attn.c_proj and mlp.c_proj), so N = 2 * n_layer",
        ),
        (
            target,
            "missing-sqrt",
            "its std is 0.02 / (2 * n_layer): the factor is 1 / sqrt(2 * n_layer); "
            "variances add, so the std scales with a square root",
        ),
        (
            BASE_STD,
            "multiplied-by-target-std",
            "its std is 0.02 x the target: the weights already have std 0.02, "
            "so multiplying them by the target std 0.02 / sqrt(2 * n_layer) "
            "applies 0.02 twice. Rescale by 1 / sqrt(2 * n_layer), or redraw "
            "them with the target std",
        ),
    ]
    if n_layer not in (12, 24):  # at 24, sqrt(2 * 12) is sqrt(n_layer)
        known.append(
            (
                math.sqrt(2 * n_layer / 24),
                "hard-coded-n-layer",
                "its std is 0.02 / sqrt(2 * 12), GPT-2 small's depth: read "
                "n_layer from model.config.n_layer (this model has "
                f"{n_layer} blocks)",
            )
        )
    return known


@expectation
def targets(case: dict) -> dict:
    """The projections' target std and the ratios of the usual slips
    (shipped for the visible cases)."""
    n_layer = case["n_layer"]
    return {
        "std": BASE_STD / math.sqrt(2 * n_layer),
        "known": _known_ratios(n_layer),
    }


def _diagnose_std(ratio: float, known: list):
    """Name the formula a projection's std ratio (got / target) points at."""
    for value, diagnosis, hint in known:
        if abs(ratio / value - 1) < REL_TOL:
            return diagnosis, hint
    return None, None


def _off_target(before: dict, tensors: dict, target: float) -> list[tuple]:
    """The projections off the target std, as (key, std ratio or None, what)."""
    bad = []
    for key in before:
        if not _PROJ.match(key):
            continue
        got = tensors.get(key)
        if got is None or got.shape != before[key].shape or not got.is_floating_point():
            bad.append((key, None, "missing or reshaped"))
            continue
        got = got.double()
        std, mean = got.std().item(), got.mean().item()
        ratio = std / target
        if torch.equal(got, before[key].detach().double()):
            bad.append((key, ratio, "unchanged"))
        elif abs(ratio - 1) > REL_TOL or abs(mean) > 6 * target / math.sqrt(
            got.numel()
        ):
            bad.append((key, ratio, f"std {std:.5f}, mean {mean:+.1e}"))
    return bad


def _missed_blocks(bad, n_layer: int) -> tuple[str | None, str | None]:
    """When every off-target projection is unchanged and they are exactly
    both projections of the first or the last block: a loop's boundary."""
    if not bad or not all(w == "unchanged" for _, _, w in bad):
        return None, None
    blocks = {int(_PROJ.match(k).group(1)) for k, _, _ in bad}
    if len(bad) != 2 * len(blocks) or len(blocks) != 1 or n_layer < 2:
        return None, None
    (block,) = blocks
    if block == n_layer - 1:
        return (
            "skipped-block",
            f"both projections of the last block, h.{block}, are unchanged: "
            "the loop stops one block early; range(n_layer) (or iterating "
            f"model.transformer.h) reaches h.{n_layer - 1}",
        )
    if block == 0:
        return (
            "skipped-block",
            "both projections of the first block, h.0, are unchanged: the "
            "loop starts at 1; blocks are numbered from 0, range(n_layer)",
        )
    return None, None


def _missed_kind(bad) -> tuple[str | None, str | None]:
    """When every off-target projection is unchanged and all are of one
    kind (attn or mlp), the sub-layer the learner forgot."""
    kinds = {_PROJ.match(k).group(2) for k, _, w in bad if w == "unchanged"}
    if not kinds or not all(w == "unchanged" for _, _, w in bad):
        return None, None
    if kinds == {"mlp"}:
        return (
            "missed-mlp-proj",
            "every mlp.c_proj.weight is unchanged: the MLP's output "
            "projection writes into the residual stream too",
        )
    if kinds == {"attn"}:
        return (
            "missed-attn-proj",
            "every attn.c_proj.weight is unchanged: attention's output "
            "projection writes into the residual stream too",
        )
    return None, None


def _projection_check(name, before, tensors, case, hidden) -> CheckResult:
    """The residual projections: std near the target, mean near zero."""
    n_layer, shipped = case["n_layer"], targets(case)
    target = shipped["std"]
    bad = _off_target(before, tensors, target)
    check = f"{name}: residual projections"
    if not bad:
        return CheckResult(
            name=check,
            passed=True,
            hidden=hidden,
            message=f"all {2 * n_layer} c_proj weights have std within "
            f"{REL_TOL:.0%} of 0.02 / sqrt(2 * {n_layer}) = {target:.5f}",
        )
    key, ratio, what = bad[0]
    diagnosis, hint = (None, None)
    if ratio is not None:
        diagnosis, hint = _diagnose_std(ratio, shipped["known"])
    missed = _missed_kind(bad)
    if missed[0]:
        diagnosis, hint = missed
    skipped = _missed_blocks(bad, n_layer)
    if skipped[0]:
        diagnosis, hint = skipped
    message = (
        f"{len(bad)} of {2 * n_layer} residual projections are off the "
        f"target std 0.02 / sqrt(2 * {n_layer}) = {target:.5f} (e.g. {key}: "
        f"{what}" + (f", {ratio:.2f} x the target" if ratio is not None else "") + ")"
    )
    if hint:
        message += f": {hint}"
    return fail(
        check,
        message,
        diagnosis=diagnosis,
        hidden=hidden,
        expected=f"std {target:.5f}",
        got=what if ratio is None else f"{ratio:.2f} x target",
    )


def _others_check(name, before, tensors, hidden) -> CheckResult:
    """Every other parameter exactly as it was handed over."""
    changed = []
    for key, p in before.items():
        if _PROJ.match(key):
            continue
        got = tensors.get(key)
        if got is None or got.shape != p.shape or not torch.equal(got, p.detach()):
            changed.append(key)
    check = f"{name}: other parameters"
    if not changed:
        return CheckResult(
            name=check,
            passed=True,
            hidden=hidden,
            message="every other parameter is exactly as it was",
        )
    biases = [k for k in changed if k.endswith("c_proj.bias")]
    if biases and len(biases) == len(changed):
        diagnosis = "touched-biases"
        hint = (
            "the c_proj biases changed: a filter like `'c_proj' in name` "
            "over named_parameters() also matches c_proj.bias; GPT-2 keeps "
            "biases at zero and scales only the weights"
        )
    else:
        diagnosis = "scaled-other-weights"
        hint = (
            "only the two projections that add into the residual stream "
            "are scaled; c_attn, c_fc, the embeddings and the LayerNorms "
            "keep their init"
        )
    return fail(
        check,
        f"{len(changed)} other parameters changed (e.g. "
        f"{', '.join(changed[:3])}): {hint}",
        diagnosis=diagnosis,
        hidden=hidden,
    )


def check_case(case: dict, data: dict, tensors: dict):
    if raised := case_error(case, data, ERRORS):
        return raised
    name, hidden = case["name"], bool(case["hidden"])
    before = dict(naive_model(case).named_parameters())
    return [
        _projection_check(name, before, tensors, case, hidden),
        _others_check(name, before, tensors, hidden),
    ]
