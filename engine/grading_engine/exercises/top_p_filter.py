"""top-p-filter: nucleus sampling's filter on a batch of logits.

Keep, in every row, the smallest set of most-probable tokens whose total
probability reaches p (always at least the top token); set every other logit
to -inf and leave the kept logits unchanged, so a softmax afterwards
renormalises over the nucleus. p is moved so that no row has a cumulative
probability within 2e-5 of it: the boundary token is never a matter of
rounding, and an off-by-one is a real, named mistake.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.fingerprints import tells_apart
from grading_engine.checks.result import CheckResult, fail, likely_mistake
from grading_engine.checks.shapes import check_shape
from grading_engine.checks.tensors import (
    case_error,
    check_dtype,
    check_is_tensor,
    failed,
    input_changes,
    run_and_capture,
)

SLUG = "top-p-filter"
ENTRY_POINT = "top_p_filter"
SIGNATURE = "top_p_filter(logits, p) -> Tensor"

MARGIN = 2e-5  # no cumulative probability this close to p
VALUE_TOL = 1e-6


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases: list[dict] = [
        {
            "name": "one peaked row, p=0.9",
            "hidden": False,
            "shape": [1, 50],
            "scale": 3.0,
            "p": 0.9,
            "seed": 3,
        },
        {
            "name": "(4, 97) rows, p=0.5",
            "hidden": False,
            "shape": [4, 97],
            "scale": 2.0,
            "p": 0.5,
            "seed": 4,
        },
        {
            "name": "hidden: flat rows",
            "hidden": True,
            "shape": [rng.randint(2, 5), rng.choice([89, 211])],
            "scale": 0.3,
            "p": rng.choice([0.8, 0.9, 0.95]),
            "seed": rng.randrange(2**31),
        },
        {
            "name": "hidden: very peaked rows",
            "hidden": True,
            "shape": [rng.randint(2, 5), rng.choice([131, 257])],
            "scale": 6.0,
            "p": rng.choice([0.6, 0.9]),
            "seed": rng.randrange(2**31),
        },
    ]
    for i in range(2):
        cases.append(
            {
                "name": f"hidden random {i + 1}",
                "hidden": True,
                "shape": [rng.randint(2, 6), rng.choice([53, 97, 503])],
                "scale": rng.choice([1.0, 2.0, 4.0]),
                "p": round(rng.uniform(0.3, 0.97), 3),
                "seed": rng.randrange(2**31),
            }
        )
    return cases


def _cumulative(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(sorted indices, cumulative probabilities in that order), float64."""
    probs = torch.softmax(logits.double(), dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    return order, sorted_probs.cumsum(dim=-1)


def inputs(case: dict) -> tuple[torch.Tensor, float]:
    """(logits (b, V) float32, p), p moved off every row's boundaries.

    Float32 and float64 cumulative sums differ by far less than MARGIN, so
    with p at least MARGIN from every cumulative probability, the nucleus is
    the same however a correct solution sums.
    """
    g = torch.Generator().manual_seed(case["seed"])
    logits = torch.randn(*case["shape"], generator=g) * case["scale"]
    _, cum = _cumulative(logits)
    offsets = torch.arange(0, 4001, dtype=torch.float64) * 1e-5  # 0 .. 0.04
    candidates = torch.stack([case["p"] - offsets, case["p"] + offsets], 1).flatten()
    candidates = candidates[(candidates > 0.01) & (candidates < 0.99)]
    distance = (cum.flatten()[None, :] - candidates[:, None]).abs().min(dim=1).values
    ok = (distance > MARGIN).nonzero()
    best = int(ok[0]) if len(ok) else int(distance.argmax())
    return logits, round(float(candidates[best]), 6)


def keep_mask(logits: torch.Tensor, p: float, *, include_crossing: bool = True):
    """True where top-p keeps the token (the reference, and one flaw)."""
    order, cum = _cumulative(logits)
    before = cum - torch.softmax(logits.double(), -1).gather(-1, order)
    keep_sorted = before < p if include_crossing else cum <= p
    keep_sorted[..., 0] = True  # the most probable token always survives
    mask = torch.zeros_like(keep_sorted)
    return mask.scatter(-1, order, keep_sorted)


def reference(logits: torch.Tensor, p: float) -> torch.Tensor:
    return logits.masked_fill(~keep_mask(logits, p), float("-inf"))


def run_case(fn, case: dict):
    logits, p = inputs(case)
    return run_and_capture(fn, logits.clone(), p)


def _wrong_values(got, logits, probs, expected_keep) -> tuple[str, str] | None:
    """Probabilities, or zeros where -inf belongs, returned for the logits."""
    nucleus = probs.masked_fill(~expected_keep, 0.0)
    nucleus = nucleus / nucleus.sum(-1, keepdim=True)
    right = logits.double().masked_fill(~expected_keep, float("-inf"))

    def matches(variant):
        return tells_apart(got.double(), variant, right, rtol=0.0, atol=1e-5)

    if matches(nucleus):
        return (
            "returned-probabilities",
            "you returned the renormalised probabilities of the nucleus: return "
            "LOGITS, the kept ones unchanged and the rest -inf, so the caller "
            "can still apply a temperature and its own softmax",
        )
    if matches(logits.double().masked_fill(~expected_keep, 0.0)):
        return (
            "zeroed-not-masked",
            "you set the filtered logits to 0, not -inf: a logit of 0 still gets "
            "probability exp(0) / Z after the softmax, so the filtered tokens "
            "can be sampled. Use float('-inf')",
        )
    return None


def _wrong_set(got, logits, p, expected_keep, kept) -> tuple[str, str] | None:
    """An off-by-one nucleus, an output left sorted, or top-k instead."""
    if torch.equal(kept, keep_mask(logits, p, include_crossing=False)):
        return (
            "nucleus-off-by-one",
            "you drop the token whose probability carries the running total "
            "past p, so your nucleus holds LESS than p: keep a token when the "
            "probability of the tokens ranked above it is still below p "
            "(shift the 'remove' mask right by one, as cumsum - prob < p)",
        )
    sorted_logits = logits.sort(dim=-1, descending=True).values
    in_rank_order = expected_keep.gather(-1, logits.argsort(-1, descending=True))
    if torch.equal(got, sorted_logits.masked_fill(~in_rank_order, float("-inf"))):
        return (
            "forgot-unsort",
            "your output is in sorted order: after filtering the sorted logits, "
            "put them back at their token ids (scatter with the sort indices), "
            "or the ids the sampler draws are ranks, not tokens",
        )
    counts = kept.sum(-1)
    if (
        len(counts) > 1
        and 0 < int(counts[0]) < kept.shape[-1]  # all kept is no filter, not top-k
        and bool((counts == counts[0]).all())
        and bool((kept == _top_k(logits, int(counts[0]))).all())
        and not torch.equal(kept, expected_keep)
    ):
        return (
            "top-k-not-top-p",
            f"you keep the same number of tokens ({int(counts[0])}) in every row: "
            "that is top-k. Top-p keeps as many as it takes to reach probability "
            "p, few in a peaked row and many in a flat one",
        )
    return None


def _diagnose(name, got, logits, p, expected_keep, removed, hidden):
    """Name the mistake behind a wrong kept set or wrong kept values."""
    probs = torch.softmax(logits.double(), -1)
    found = _wrong_values(got, logits, probs, expected_keep) or _wrong_set(
        got, logits, p, expected_keep, ~removed
    )
    if found is None:
        return None
    diagnosis, message = found
    return likely_mistake(name, message, diagnosis=diagnosis, hidden=hidden)


def _top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    idx = logits.topk(k, dim=-1).indices
    return torch.zeros_like(logits, dtype=torch.bool).scatter(-1, idx, True)


def _form_checks(name, data, got, logits, hidden) -> list[CheckResult]:
    """A tensor of the logits' shape and dtype; stops at the first failure."""
    missing = check_is_tensor(f"{name}: type", data.get("output"), got, hidden=hidden)
    if missing:
        return [missing]
    b, V = logits.shape
    shape = check_shape(
        f"{name}: shape",
        tuple(got.shape),
        (b, V),
        ("batch", "vocab"),
        {},
        hidden=hidden,
    )
    if not shape.passed:
        return [shape]
    dtype = check_dtype(
        f"{name}: dtype",
        got,
        logits.dtype,
        hint="keep the logits' float32",
        hidden=hidden,
    )
    return [shape, dtype]


def _kept_set_check(name, kept, expected_keep, p, hidden) -> CheckResult:
    if torch.equal(kept, expected_keep):
        return CheckResult(
            f"{name}: kept tokens",
            True,
            f"p={p:g}: the same {int(kept.sum())} tokens kept in {kept.shape[0]} rows",
            hidden=hidden,
        )
    extra = int((kept & ~expected_keep).sum())
    lost = int((expected_keep & ~kept).sum())
    row = int((kept != expected_keep).any(-1).nonzero()[0])
    return fail(
        f"{name}: kept tokens",
        f"p={p:g}: you kept {int(kept.sum())} tokens in all, the nucleus has "
        f"{int(expected_keep.sum())} ({extra} kept that should go, {lost} "
        f"removed that should stay; first differing row {row}, whose "
        f"nucleus has {int(expected_keep[row].sum())} of {kept.shape[-1]} tokens)",
        hidden=hidden,
        expected=f"{int(expected_keep.sum())} kept",
        got=f"{int(kept.sum())} kept",
    )


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The answer's checks, and one for an argument changed in place."""
    changed = input_changes(case["name"], data, hidden=bool(case["hidden"]))
    return changed + _check_answer(case, data, tensors)


def _check_answer(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data):
        return raised
    logits, p = inputs(case)
    got = tensors.get("output")
    results = _form_checks(name, data, got, logits, hidden)
    if failed(results):
        return results
    expected_keep = keep_mask(logits, p)
    removed = (got == float("-inf")) | (got <= torch.finfo(torch.float32).min / 2)
    kept = ~removed
    results.append(_kept_set_check(name, kept, expected_keep, p, hidden))
    if not results[-1].passed:
        mistake = _diagnose(name, got, logits, p, expected_keep, removed, hidden)
        return results + ([mistake] if mistake else [])
    if torch.allclose(got[kept], logits[kept], rtol=0, atol=VALUE_TOL):
        results.append(
            CheckResult(
                f"{name}: kept values",
                True,
                "the kept logits are unchanged",
                hidden=hidden,
            )
        )
        return results
    mistake = _diagnose(name, got, logits, p, expected_keep, removed, hidden)
    results.append(
        fail(
            f"{name}: kept values",
            "the kept tokens are right but their values changed: return the "
            "original logits at kept positions (no softmax, no temperature)",
            hidden=hidden,
        )
    )
    return results + ([mistake] if mistake else [])
