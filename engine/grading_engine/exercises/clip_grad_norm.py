"""clip-grad-norm: global gradient-norm clipping, written by hand.

The learner gets a list of parameters whose .grad is set (or None) and
max_norm. They must compute the L2 norm of ALL gradients taken together,
scale every gradient in place by max_norm / (total + 1e-6) when that is
below 1, and return the norm measured BEFORE clipping, like
torch.nn.utils.clip_grad_norm_. The parent recomputes both the returned norm
and every clipped gradient; the usual slips (clipping each tensor by its own
norm, clamping values, scaling small gradients up, returning the clipped
norm, adding norms instead of squares) each give a different, recognisable
result. One hidden case has fixed values in every draw: a parameter without
a gradient and a total norm of 0.9 x max_norm=3.0.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.fingerprints import tells_apart
from grading_engine.checks.learner_calls import call_learner, capture_tensor
from grading_engine.checks.result import CheckResult, fail, likely_mistake
from grading_engine.checks.tensors import case_error, compare_tensor, failed
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import plain_float, type_name

SLUG = "clip-grad-norm"
ENTRY_POINT = "clip_grad_norm"
SIGNATURE = "clip_grad_norm(params, max_norm) -> float"

EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-7

_NONE_HINT = (
    "a parameter that took no part in the loss has .grad None: skip it "
    "(as torch.nn.utils.clip_grad_norm_ does), do not treat it as zero"
)
ERRORS = [
    ("'NoneType' object has no attribute", "none-grad", _NONE_HINT),
    ("'NoneType' and", "none-grad", _NONE_HINT),
    ("NoneType", "none-grad", _NONE_HINT),
]


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("a spike: norm far above max_norm=1.0", False,
                 shapes=[[8, 4], [8], [4, 4]], scale=5.0, max_norm=1.0, seed=1),
        new_case("a calm step: norm below max_norm", False,
                 shapes=[[6, 3], [3]], scale=0.05, max_norm=1.0, seed=2),
        new_case("hidden: one parameter without a gradient", True,
                 shapes=[[5, 7], [7], [7, 2]], none=[1], scale=3.0,
                 max_norm=round(rng.uniform(0.5, 2.0), 3), seed=rng.randrange(2**31)),
    ]  # fmt: skip
    for i in range(2):
        n = rng.randint(2, 5)
        shapes = [
            [rng.randint(2, 9), rng.randint(2, 9)]
            if rng.random() < 0.6
            else [rng.randint(2, 9)]
            for _ in range(n)
        ]
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                shapes=shapes,
                scale=rng.choice([0.5, 2.0, 10.0]),
                max_norm=rng.choice([0.25, 1.0, 5.0]),
                seed=rng.randrange(2**31),
            )
        )
    # The limit in every draw: a total norm just below max_norm (left alone),
    # exactly at it (either choice is within tolerance) and just above it
    # (scaled). max_norm is drawn above 1 below the limit and below 1 above
    # it, so a test on the SQUARED norm gets the wrong side both times.
    for label, ratio, max_norm in (
        ("just below", 1 - rng.uniform(0.02, 0.1), round(rng.uniform(1.5, 6.0), 3)),
        ("at", 1.0, round(rng.uniform(0.2, 6.0), 3)),
        ("just above", 1 + rng.uniform(0.02, 0.1), round(rng.uniform(0.2, 0.8), 3)),
    ):
        cases.append(
            new_case(
                f"hidden: total norm {label} max_norm",
                True,
                shapes=[[rng.randint(2, 6), rng.randint(2, 6)], [rng.randint(2, 9)]],
                scale=1.0,
                ratio=ratio,
                max_norm=max_norm,
                seed=rng.randrange(2**31),
            )
        )
    # The same values in every draw: a parameter without a gradient (a loop
    # over p.grad crashes) and a total norm of 0.9 x max_norm=3.0, so a test
    # on the SQUARED norm (7.29 > 3.0) scales gradients that must stay put.
    cases.append(
        new_case(
            "hidden: no gradient on one parameter, norm 0.9 x max_norm",
            True,
            shapes=[[3, 4], [4], [4, 2]],
            none=[1],
            scale=1.0,
            ratio=0.9,
            max_norm=3.0,
            seed=20260,
        )
    )
    return cases


def inputs(case: dict) -> list[torch.Tensor]:
    """Parameters with their gradients set; uneven scales per tensor."""
    g = torch.Generator().manual_seed(case["seed"])
    params = []
    for i, shape in enumerate(case["shapes"]):
        p = torch.nn.Parameter(torch.randn(*shape, generator=g))
        if i not in case.get("none", []):
            # Each tensor its own scale, so per-tensor and global clipping differ.
            p.grad = torch.randn(*shape, generator=g) * case["scale"] * (i + 1)
        params.append(p)
    if "ratio" in case:
        # Rescale all gradients together to a total norm of ratio * max_norm.
        grads = [p.grad for p in params if p.grad is not None]
        total = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))
        factor = case["ratio"] * case["max_norm"] / total
        for p in params:
            if p.grad is not None:
                p.grad = (p.grad.double() * factor).float()
    return params


def run_case(fn, case: dict):
    params = inputs(case)
    value, error = call_learner(fn, params, case["max_norm"])
    if error:
        return {"error": error}, {}
    data: dict = {"error": None, "type": type_name(value)}
    tensors: dict = {}
    if isinstance(value, torch.Tensor):
        info, t = capture_tensor(value)
        data["norm_info"] = info
        if t is not None and t.numel() == 1:
            data["norm"] = float(t.double().item())
    elif (norm := plain_float(value)) is not None:
        data["norm"] = norm  # a float, a numpy scalar or an int
    for i, p in enumerate(params):
        if p.grad is not None:
            tensors[f"grad{i}"] = p.grad.detach().clone()
    return data, tensors


def _total(grads: list[torch.Tensor]) -> float:
    return float(torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).item())


def reference(case: dict) -> tuple[float, dict[int, torch.Tensor]]:
    params = inputs(case)
    grads = {i: p.grad for i, p in enumerate(params) if p.grad is not None}
    total = _total(list(grads.values()))
    factor = min(1.0, case["max_norm"] / (total + EPS))
    return total, {i: g * factor for i, g in grads.items()}


def _variant_grads(case: dict, kind: str) -> dict[int, torch.Tensor]:
    params = inputs(case)
    grads = {i: p.grad for i, p in enumerate(params) if p.grad is not None}
    m = case["max_norm"]
    if kind == "per-tensor-clipping":
        return {i: g * min(1.0, m / (float(g.norm()) + EPS)) for i, g in grads.items()}
    if kind == "clipped-values":
        return {i: g.clamp(-m, m) for i, g in grads.items()}
    if kind == "scaled-up-small-grads":
        total = _total(list(grads.values()))
        return {i: g * (m / (total + EPS)) for i, g in grads.items()}
    if kind == "not-written-back":
        return dict(grads)
    if kind == "clip-threshold":
        if case.get("ratio", 1.0) >= 1.0:
            # Just above the limit, unchanged gradients have many causes (no
            # clipping, no write-back, a per-tensor or RMS norm): see
            # _grad_mistake. Only the side below the limit is this slip's own.
            return {i: g * float("nan") for i, g in grads.items()}  # never matches
        total = _total(list(grads.values()))
        return {i: g * (m / (total + EPS)) for i, g in grads.items()}
    if kind == "weights-norm":
        params = [p for p in params if p.grad is not None]
        total = _total([p.detach() for p in params])
        factor = min(1.0, m / (total + EPS))
        return {i: g * factor for i, g in grads.items()}
    if kind == "rms-not-norm":
        flat = torch.cat([g.double().flatten() for g in grads.values()])
        total = float(flat.pow(2).mean().sqrt())
        return {i: g * min(1.0, m / (total + EPS)) for i, g in grads.items()}
    if kind == "sum-of-norms":
        total = sum(float(g.norm()) for g in grads.values())
        return {i: g * min(1.0, m / (total + EPS)) for i, g in grads.items()}
    raise ValueError(kind)


MESSAGES = {
    "clip-threshold": (
        "the total norm here is just BELOW max_norm, so the gradients must "
        "stay as they are, yet you scaled them: clip only when the total "
        "norm itself exceeds max_norm (total_norm > max_norm). Comparing the "
        "SQUARED norm with max_norm moves the limit to sqrt(max_norm)"
    ),
    "weights-norm": (
        "you measured the norm of the PARAMETERS (p), not of their gradients "
        "(p.grad): clipping limits the size of the update, so the total norm "
        "is sqrt(sum of p.grad's squared elements)"
    ),
    "rms-not-norm": (
        "you took the root MEAN square of the gradients: the L2 norm sums the "
        "squares, it does not average them (sqrt(sum(g ** 2)), no division by "
        "the number of elements)"
    ),
    "per-tensor-clipping": (
        "you clipped each tensor by its OWN norm: clip_grad_norm_ measures one "
        "norm over all gradients together, sqrt(sum of every squared element), "
        "and scales every tensor by the same factor, so the update keeps its "
        "direction"
    ),
    "clipped-values": (
        "you clamped each element to [-max_norm, max_norm]: that is value "
        "clipping (clip_grad_value_), which changes the gradient's direction. "
        "Norm clipping rescales the whole gradient by max_norm / total_norm"
    ),
    "scaled-up-small-grads": (
        "you rescaled the gradient to norm max_norm even when it was smaller: "
        "clipping only ever shrinks, factor = min(1, max_norm / (total + 1e-6))"
    ),
    "not-written-back": (
        "your gradients are unchanged: the clipped values never reached "
        "p.grad. `g = g * factor` makes a new tensor and rebinds a local "
        "name, and the optimizer reads p.grad; scale in place, "
        "p.grad.mul_(factor), or assign p.grad = p.grad * factor"
    ),
    "sum-of-norms": (
        "you added the tensors' norms: the global norm is the square root of "
        "the sum of their SQUARED norms, sqrt(sum(g.norm() ** 2))"
    ),
}


@expectation
def clipped(case: dict) -> dict:
    """The total norm, the clipped gradients and their norm (shipped for the
    visible cases)."""
    total, grads = reference(case)
    clipped_norm = min(total, total * case["max_norm"] / (total + EPS))
    return {"total": total, "grads": grads, "clipped_norm": clipped_norm}


@expectation
def known_mistakes(case: dict) -> dict:
    """The gradients each known slip leaves (shipped for the visible cases)."""
    return {kind: _variant_grads(case, kind) for kind in MESSAGES}


def _grad_checks(name, expected, tensors, hidden) -> list[CheckResult]:
    """Every clipped gradient against the reference's."""
    results: list[CheckResult] = []
    for i, want in expected.items():
        got = tensors.get(f"grad{i}")
        if got is None:
            results.append(
                fail(
                    f"{name}: grad of parameter {i}",
                    f"parameter {i}'s .grad is None after your call: scale each "
                    "gradient in place (g.mul_(factor)), do not clear or replace it",
                    hidden=hidden,
                )
            )
            continue
        results += compare_tensor(
            f"{name}: grad of parameter {i}",
            {"type": "torch.Tensor"},
            got,
            want,
            axes=tuple(f"axis{k}" for k in range(want.dim())),
            sizes={},
            rtol=RTOL,
            atol=ATOL,
            what=f"the clipped gradient of parameter {i}",
            hidden=hidden,
        )
    return results


def _flat(grads: dict, keys) -> torch.Tensor | None:
    """The gradients at `keys` as one flat float64 vector, or None when one
    is missing or of another shape than the reference's."""
    parts = []
    for i, want in keys:
        got = grads.get(i)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return None
        parts.append(got.detach().double().flatten())
    return torch.cat(parts) if parts else None


def _grad_mistake(name, case, expected, tensors, hidden) -> list[CheckResult]:
    """The first known clipping slip the returned gradients match
    (fingerprints.tells_apart, over all gradients taken together)."""
    keys = list(expected.items())
    got = _flat({i: tensors.get(f"grad{i}") for i in expected}, keys)
    if got is None:
        return []
    reference = _flat(expected, keys)
    known = known_mistakes(case)
    unchanged = _flat(known["not-written-back"], keys)
    for kind, message in MESSAGES.items():
        variant = _flat(known[kind], keys)
        if (
            kind != "not-written-back"
            and variant is not None
            and unchanged is not None
            and torch.allclose(variant, unchanged, rtol=RTOL, atol=ATOL)
        ):
            continue  # a slip that clips nothing here leaves no fingerprint
        if variant is not None and tells_apart(
            got, variant, reference, rtol=RTOL, atol=ATOL
        ):
            if kind == "not-written-back" and case.get("ratio", 0.0) > 1.0:
                # Just above the limit: unclipped or not written back, or a
                # per-tensor/RMS norm that stays under max_norm; say what is
                # seen, not a guess.
                return [
                    likely_mistake(
                        name,
                        "your gradients are unchanged, but their total norm is "
                        "just ABOVE max_norm, so every gradient must be scaled "
                        "by max_norm / (total_norm + 1e-6): clip whenever the "
                        "global norm (all gradients together, not each "
                        "tensor, not its square) exceeds max_norm, and scale "
                        "p.grad itself",
                        diagnosis=None,
                        hidden=hidden,
                    )
                ]
            return [likely_mistake(name, message, diagnosis=kind, hidden=hidden)]
    return []


def _norm_check(name, got_norm, total, clipped_norm, max_norm, hidden) -> CheckResult:
    """The returned norm is the total BEFORE clipping."""
    check = f"{name}: returned norm"
    if abs(got_norm - total) <= RTOL * total + ATOL:
        return CheckResult(
            check, True, f"total norm {total:.6g} before clipping", hidden=hidden
        )
    if total > max_norm and abs(got_norm - clipped_norm) <= 1e-4:
        return fail(
            check,
            f"you returned {got_norm:.6g}, the norm AFTER clipping: return the "
            f"norm measured before ({total:.6g}); it is what you log to see "
            "spikes, and after clipping it is just max_norm",
            diagnosis="returned-clipped-norm",
            hidden=hidden,
        )
    return fail(check, f"expected {total:.6g}, got {got_norm:.6g}", hidden=hidden)


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data, ERRORS):
        return raised
    shipped = clipped(case)
    total, expected = shipped["total"], shipped["grads"]
    results = _grad_checks(name, expected, tensors, hidden)
    if failed(results):
        return results + _grad_mistake(name, case, expected, tensors, hidden)
    got_norm = data.get("norm")
    if not isinstance(got_norm, float):
        return results + [
            fail(
                f"{name}: returned norm",
                f"expected the total norm as a float or a one-element tensor, got "
                f"{data.get('type', '?')}",
                hidden=hidden,
            )
        ]
    return results + [
        _norm_check(
            name, got_norm, total, shipped["clipped_norm"], case["max_norm"], hidden
        )
    ]
