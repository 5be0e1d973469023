"""gpt2-init: apply GPT-2's initialisation to a freshly built GPT, in place.

Every Linear and Embedding weight ~ N(0, 0.02); the two projections that
write into the residual stream (attn.c_proj, mlp.c_proj) ~ N(0, 0.02 /
sqrt(2 * n_layer)); every bias 0; every LayerNorm weight 1 and bias 0; the
tied head keeps sharing wte. The child builds the model with PyTorch's
default init (nn.Embedding is N(0, 1)), calls the learner's function and
sends every tensor back; the parent measures the statistics itself. The
tensors have thousands of elements, so a 6% tolerance on a standard
deviation is more than six standard errors wide.
"""

from __future__ import annotations

import math
import random

import torch

from grading_engine.checks.learner_calls import call_learner
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.reference import GPT, get_config

SLUG = "gpt2-init"
ENTRY_POINT = "gpt2_init_"
SIGNATURE = "gpt2_init_(model) -> None"
# Initialising rewrites values in place; replacing or untying a Parameter is a bug.
MODEL_CHANGES = frozenset({"values"})

STD = 0.02
REL_TOL = 0.06
_KURTOSIS_PROBE = "transformer.h.0.mlp.c_fc.weight"  # a big, plain N(0, 0.02) draw


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("4 layers, width 128", False, n_layer=4, seed=1),
        new_case("2 layers, width 128", False, n_layer=2, seed=2),
    ]
    return cases + [
        new_case(
            f"hidden {i + 1}",
            True,
            n_layer=rng.choice([3, 5, 6, 8]),
            seed=rng.randrange(2**31),
        )
        for i in range(2)
    ]


def config(case: dict):
    return get_config(
        "tiny",
        vocab_size=503,
        block_size=64,
        n_layer=case["n_layer"],
        n_head=4,
        n_embd=128,
    )


def run_case(fn, case: dict):
    # Seeded for the model's default init and the learner's own draws alike,
    # leaving the caller's generator as it was (in-process runs share it).
    with torch.random.fork_rng():
        torch.manual_seed(case["seed"])
        model = GPT(config(case))  # PyTorch's default init, as after construction
        _, error = call_learner(fn, model)
    if error:
        return {"error": error}, {}
    data = {
        "error": None,
        "tied": model.lm_head.weight is model.transformer.wte.weight,
    }
    tensors = {}
    for name, p in model.named_parameters():  # a shared tensor is listed once
        if isinstance(p, torch.Tensor) and p.dtype == torch.float32:
            tensors[name] = p.detach().clone()
    return data, tensors


def expected_std(name: str, n_layer: int) -> float | None:
    """GPT-2's std for a weight, None for biases and LayerNorm parameters."""
    if name.endswith(".bias") or ".ln_" in name:
        return None
    if name.endswith("c_proj.weight"):
        return STD / math.sqrt(2 * n_layer)
    return STD


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= REL_TOL * target


def _c_proj_slips(n_layer: int) -> list[tuple[float, str, str]]:
    slips = [
        (
            STD,
            "no-residual-scaling",
            "the residual projections got the plain 0.02: GPT-2 draws attn.c_proj "
            "and mlp.c_proj with std 0.02 / sqrt(2 * n_layer), because each of "
            "the 2 * n_layer sub-layers adds its output to the residual stream",
        ),
        (
            STD / math.sqrt(n_layer),
            "forgot-factor-2",
            "you used 0.02 / sqrt(n_layer): each block adds TWO outputs to the "
            "stream (attention and MLP), so divide by sqrt(2 * n_layer)",
        ),
        (
            STD / (2 * n_layer),
            "missing-sqrt",
            "you divided by 2 * n_layer: the variances add, so the std is divided "
            "by its square root, sqrt(2 * n_layer)",
        ),
        (
            STD / math.sqrt(24),
            "hard-coded-n-layer",
            "you used GPT-2 small's sqrt(2 * 12): read n_layer from "
            "model.config.n_layer (this model has a different depth)",
        ),
    ]
    return [
        slip
        for slip in slips
        if not (slip[1] == "hard-coded-n-layer" and n_layer == 12)
    ]


@expectation
def init_targets(case: dict) -> dict:
    """Each parameter's GPT-2 std (None: a constant), and the stds the usual
    c_proj slips give (shipped for the visible cases)."""
    n_layer = case["n_layer"]
    # Only the names: built on the meta device, with no draw from torch's
    # global generator, which other grading threads share.
    with torch.device("meta"):
        names = sorted(n for n, _ in GPT(config(case)).named_parameters())
    return {
        "stds": {name: expected_std(name, n_layer) for name in names},
        "c_proj_slips": _c_proj_slips(n_layer),
        "residual": expected_std("c_proj.weight", n_layer),
    }


def _c_proj_diagnosis(got: float, slips: list):
    for target, diagnosis, hint in slips:
        if _near(got, target):
            return diagnosis, hint
    return None


def _constant_check(name, pname, t, hidden) -> CheckResult | None:
    """Biases start at 0, LayerNorm weights at 1 and their biases at 0."""
    is_ln = ".ln_" in pname
    want = 1.0 if (is_ln and pname.endswith("weight")) else 0.0
    if bool((t == want).all()):
        return None
    diagnosis = "layernorm-randomised" if is_ln else "biases-not-zeroed"
    hint = (
        "LayerNorm starts as the identity scale and shift: weight 1, "
        "bias 0. Drawing it from N(0, 0.02) multiplies every "
        "normalised activation by almost 0"
        if is_ln
        else "GPT-2 starts every bias at 0 (zeros_), not at PyTorch's "
        "small uniform default nor at random normal values"
    )
    return fail(
        f"{name}: {pname}",
        f"expected every value {want:g}, got mean {t.mean():.4g}, "
        f"std {t.std():.4g}: {hint}",
        diagnosis=diagnosis,
        hidden=hidden,
    )


def _std_check(name, pname, t, target, slips, hidden) -> CheckResult | None:
    """A weight's std near GPT-2's and its mean near 0; else the init it matches."""
    std, mean = t.std().item(), t.mean().item()
    if _near(std, target) and abs(mean) < 4 * target / math.sqrt(t.numel()) + 1e-4:
        return None
    message = f"std {std:.4g}, expected {target:.4g} (mean {mean:.3g})"
    diagnosis = None
    fan_in = t.shape[1] if t.dim() == 2 else 0
    if pname.endswith(("wte.weight", "wpe.weight")) and _near(std, 1.0):
        diagnosis = "embedding-default-init"
        message += (
            ": that is nn.Embedding's default N(0, 1), 50 times GPT-2's 0.02. "
            "With the tied head the first logits then have a std near "
            "sqrt(n_embd) and the first loss is far above ln(vocab_size)"
        )
    elif fan_in and _near(std, 1 / math.sqrt(3 * fan_in)):
        diagnosis = "linear-default-init"
        message += (
            ": that is nn.Linear's default (uniform, bound 1/sqrt(fan_in)); "
            "GPT-2 draws from N(0, 0.02) whatever the width"
        )
    elif pname.endswith("c_proj.weight"):
        found = _c_proj_diagnosis(std, slips)
        if found:
            diagnosis, hint = found
            message += f": {hint}"
    return fail(
        f"{name}: {pname}",
        message,
        diagnosis=diagnosis,
        hidden=hidden,
        expected=f"{target:.4g}",
        got=f"{std:.4g}",
    )


def _distribution_check(name, probe, hidden) -> list[CheckResult]:
    """Right spread but a uniform draw: GPT-2 uses a normal distribution."""
    z = (probe.double() - probe.double().mean()) / probe.double().std()
    kurtosis = (z**4).mean().item()
    if kurtosis >= 2.4:
        return []
    return [
        fail(
            f"{name}: distribution",
            f"the weights have the right std but a kurtosis of {kurtosis:.2f} "
            "(a normal distribution has 3, a uniform one 1.8): draw from "
            "N(0, std) with nn.init.normal_, not a uniform",
            diagnosis="uniform-not-normal",
            hidden=hidden,
        )
    ]


def _tie_check(name, data, hidden) -> list[CheckResult]:
    if data.get("tied") is True:
        return []
    return [
        fail(
            f"{name}: tie",
            "lm_head.weight is no longer transformer.wte.weight: "
            "initialise the shared Parameter in place instead of assigning a new "
            "one, so the head and the embedding stay one tensor",
            diagnosis="not-tied",
            hidden=hidden,
        )
    ]


def _parameter_checks(name, tensors, targets, hidden) -> list[CheckResult]:
    """Every parameter against GPT-2's init, then the shape of the draw."""
    results, bad_std = [], []
    slips = targets["c_proj_slips"]
    for pname, target in sorted(targets["stds"].items()):
        t = tensors[pname].double()
        if target is None:
            found = _constant_check(name, pname, t, hidden)
        else:
            found = _std_check(name, pname, t, target, slips, hidden)
            if found:
                bad_std.append(pname)
        if found:
            results.append(found)
    probe = tensors.get(_KURTOSIS_PROBE)
    if probe is not None and _KURTOSIS_PROBE not in bad_std:
        results += _distribution_check(name, probe, hidden)
    return results


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    if raised := case_error(case, data):
        return raised
    hidden, name = bool(case["hidden"]), case["name"]
    targets = init_targets(case)
    expected_names = set(targets["stds"])
    missing = sorted(expected_names - set(tensors))
    if missing:
        return [
            fail(
                f"{name}: parameters",
                f"these parameters are gone or no longer float32: "
                f"{', '.join(missing[:4])}: initialise the existing tensors "
                "in place (nn.init.normal_, .zero_(), .fill_())",
                hidden=hidden,
            )
        ]
    results = _tie_check(name, data, hidden)
    results += _parameter_checks(name, tensors, targets, hidden)
    if results:
        return results
    residual = targets["residual"]
    return [
        CheckResult(
            f"{name}: initialisation",
            True,
            f"every weight has GPT-2's std (0.02, c_proj {residual:.4g}), "
            "biases 0, LayerNorms 1 and 0, the head still tied",
            hidden=hidden,
        )
    ]
