"""top-p-filter: nucleus sampling's filter on a batch of logits.

Keep, in every row, the smallest set of most-probable tokens whose total
probability reaches p (always at least the top token); set every other logit
to -inf and leave the kept logits unchanged, so a softmax afterwards
renormalises over the nucleus. On the random cases p is moved so that no
row has a cumulative probability within 2e-5 of it: the boundary token is
never a matter of rounding, and an off-by-one is a real, named mistake.

Every draw also tests the limit itself: p exactly equal to a cumulative
probability (rows of tied tokens, whose probabilities are exact binary
fractions, so the boundary is exact in float32 too), p just below and just
above a cumulative probability, p = 1 (every token kept) and a tiny p (only
the top token, even when two tokens tie for the top). Tied tokens may be
kept in any order: a kept set is right when it has the nucleus' size in
every row and no removed token outranks a kept one. One case of tied rows
with p exactly on a running total (3 x 64, p = 0.375, seed 375) is the
same in every draw.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.fingerprints import tells_apart
from grading_engine.checks.in_place import input_changes
from grading_engine.checks.result import CheckResult, fail, likely_mistake
from grading_engine.checks.shapes import check_shape
from grading_engine.checks.tensors import (
    case_error,
    check_dtype,
    check_is_tensor,
    failed,
)
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.runs import calls
from grading_engine.expected import expectation

SLUG = "top-p-filter"
ENTRY_POINT = "top_p_filter"
SIGNATURE = "top_p_filter(logits, p) -> Tensor"

MARGIN = 2e-5  # no cumulative probability this close to p
NEAR = 1e-4  # "just below / just above": p this far from a cumulative sum
VALUE_TOL = 1e-6
EXACT_P = (0.25, 0.375, 0.5, 0.625, 0.75)  # exact binary fractions


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("one peaked row, p=0.9", False,
                 shape=[1, 50], scale=3.0, p=0.9, seed=3),
        new_case("(4, 97) rows, p=0.5", False,
                 shape=[4, 97], scale=2.0, p=0.5, seed=4),
        _drawn(rng, "hidden: flat rows",
               (2, 5), (89, 211), scale=0.3, p=(0.8, 0.9, 0.95)),
        _drawn(rng, "hidden: very peaked rows",
               (2, 5), (131, 257), scale=6.0, p=(0.6, 0.9)),
    ]  # fmt: skip
    cases += [
        _drawn(rng, f"hidden random {i + 1}", (2, 6), (53, 97, 503),
               scale=(1.0, 2.0, 4.0), p=lambda: round(rng.uniform(0.3, 0.97), 3))
        for i in range(2)
    ]  # fmt: skip
    return cases + _boundary_cases(rng)


def _drawn(rng: random.Random, name: str, rows, vocab, kind=None, **spec) -> dict:
    """A hidden case, drawn in one fixed order (a seed's cases must not move):
    its shape (rows a range, vocab a choice), then each `spec` value in turn
    (a tuple: one of its items; a function: what it draws; anything else as
    given), then its seed."""
    case = new_case(name, True, **({"kind": kind} if kind else {}))
    case["shape"] = [rng.randint(*rows), rng.choice(vocab)]
    for key, value in spec.items():
        if isinstance(value, tuple):
            value = rng.choice(value)
        case[key] = value() if callable(value) else value
    case["seed"] = rng.randrange(2**31)
    return case


def _boundary_cases(rng: random.Random) -> list[dict]:
    """The limit in every draw: at, just below and just above p, p=1, tiny p."""
    return [
        _drawn(rng, "hidden: p exactly equal to a cumulative probability (ties)",
               (2, 4), (64, 100), "exact", p=EXACT_P),
        _drawn(rng, "hidden: p just below a cumulative probability",
               (2, 4), (53, 97), "below", scale=(1.0, 2.0)),
        _drawn(rng, "hidden: p just above a cumulative probability",
               (2, 4), (53, 97), "above", scale=(1.0, 2.0)),
        _drawn(rng, "hidden: p=1.0 keeps every token",
               (2, 4), (37, 89), "all", scale=(0.3, 0.6), p=1.0),
        _drawn(rng, "hidden: tiny p keeps only the top token (a tie for the top)",
               (2, 4), (53, 97), "tiny", scale=(1.0, 3.0), p=(1e-9, 1e-6, 1e-4)),
        # The same tied rows in every draw (nothing drawn, so no rng used):
        # keeping the token after a total of exactly p fails on any seed.
        new_case("hidden: p exactly equal to a cumulative probability (fixed ties)",
                 True, kind="exact", shape=[3, 64], p=0.375, seed=375),
    ]  # fmt: skip


def _cumulative(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(sorted indices, cumulative probabilities in that order), float64."""
    probs = torch.softmax(logits.double(), dim=-1)
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    return order, sorted_probs.cumsum(dim=-1)


def inputs(case: dict) -> tuple[torch.Tensor, float]:
    """(logits (b, V) float32, p), p moved off every row's boundaries.

    Float32 and float64 cumulative sums differ by far less than MARGIN, so
    with p at least MARGIN from every cumulative probability, the nucleus is
    the same however a correct solution sums. The boundary kinds place p on
    purpose (`_boundary_inputs`).
    """
    g = torch.Generator().manual_seed(case["seed"])
    kind = case.get("kind", "random")
    if kind == "exact":
        return _tied_rows(case, g), case["p"]
    logits = torch.randn(*case["shape"], generator=g) * case["scale"]
    if kind == "tiny":
        top = logits.argmax(-1)
        twin = top + 1 + torch.randint(0, logits.shape[-1] - 1, (1,), generator=g)
        twin = twin % logits.shape[-1]
        logits[0, twin[0]] = logits[0, top[0]]  # row 0: two tokens tie for the top
        return logits, case["p"]
    if kind == "all":
        return logits, 1.0
    _, cum = _cumulative(logits)
    if kind in ("below", "above"):
        return logits, _near_boundary(logits, cum, kind, g)
    offsets = torch.arange(0, 4001, dtype=torch.float64) * 1e-5  # 0 .. 0.04
    candidates = torch.stack([case["p"] - offsets, case["p"] + offsets], 1).flatten()
    candidates = candidates[(candidates > 0.01) & (candidates < 0.99)]
    distance = _nearest_distance(cum.flatten(), candidates)
    ok = (distance > MARGIN).nonzero()
    best = int(ok[0]) if len(ok) else int(distance.argmax())
    return logits, round(float(candidates[best]), 6)


def _nearest_distance(values: torch.Tensor, points: torch.Tensor) -> torch.Tensor:
    """Each point's distance to its nearest value: the same floats as
    `(values - point).abs().min()`, found by a sorted search, not a
    (points x values) table that made this the slowest step of a grade."""
    ordered = values.sort().values
    right = torch.searchsorted(ordered, points).clamp(max=len(ordered) - 1)
    left = (right - 1).clamp(min=0)
    nearest = (ordered[left] - points).abs(), (ordered[right] - points).abs()
    return torch.minimum(*nearest)


def _tied_rows(case: dict, g: torch.Generator) -> torch.Tensor:
    """Rows of n tied tokens (n = 8, 16 or 32), the rest -inf or far below.

    Each tied token has probability exactly 1/n, so every cumulative sum is
    an exact binary fraction and p = j/n (EXACT_P) equals one of them in
    every row, in float32 as in float64: keep exactly j tokens.
    """
    b, V = case["shape"]
    logits = torch.empty(b, V)
    for row in range(b):
        n = (8, 16, 32)[int(torch.randint(0, 3, (1,), generator=g))]
        level = float(torch.randn(1, generator=g)) * 2
        below = float("-inf") if row % 2 == 0 else level - 1000.0  # probability 0
        logits[row] = below
        logits[row, torch.randperm(V, generator=g)[:n]] = level
    return logits


def _near_boundary(logits, cum, kind: str, g: torch.Generator) -> float:
    """p just below ("below") or above ("above") a cumulative sum of row 0.

    The ranked tokens on both sides of that sum carry more than NEAR, and no
    row has a cumulative sum within MARGIN of p, so rounding never decides.
    """
    probs = cum.diff(dim=-1, prepend=torch.zeros_like(cum[:, :1]))
    sign = -1.0 if kind == "below" else 1.0
    for k in torch.randperm(cum.shape[-1] - 1, generator=g).tolist():
        if not 0.05 < float(cum[0, k]) < 0.95:
            continue
        if min(float(probs[0, k]), float(probs[0, k + 1])) < 10 * NEAR:
            continue
        p = round(float(cum[0, k]) + sign * NEAR, 8)
        if bool(((cum - p).abs() > MARGIN).all()):
            return p
    raise AssertionError(
        "no cumulative probability to stand next to"
    )  # pragma: no cover


RULES = {
    "reference": lambda before, cum, p: before < p,
    "drops-crossing": lambda before, cum, p: cum <= p,  # remove cum > p
    "drops-at-p": lambda before, cum, p: cum < p,  # remove cum >= p
    "keeps-past-p": lambda before, cum, p: before <= p,  # HF's shifted cum > p
}


def keep_mask(logits: torch.Tensor, p: float, *, rule: str = "reference"):
    """True where top-p keeps the token (the reference, and the off-by-ones)."""
    order, cum = _cumulative(logits)
    before = cum - torch.softmax(logits.double(), -1).gather(-1, order)
    keep_sorted = RULES[rule](before, cum, p)
    keep_sorted[..., 0] = True  # the most probable token always survives
    mask = torch.zeros_like(keep_sorted)
    return mask.scatter(-1, order, keep_sorted) & torch.isfinite(logits)


def same_nucleus(kept: torch.Tensor, expected: torch.Tensor, logits) -> bool:
    """The same kept set, up to the order of tied tokens.

    Every row keeps as many tokens as `expected` (a top-ranked set) and no
    token it removed has a higher logit than one it kept; a -inf logit counts
    as removed either way.
    """
    if kept.shape != expected.shape:
        return False
    finite = torch.isfinite(logits)
    kept, expected = kept & finite, expected & finite
    if not torch.equal(kept.sum(-1), expected.sum(-1)):
        return False
    lowest_kept = logits.masked_fill(~kept, float("inf")).min(-1).values
    highest_removed = logits.masked_fill(kept | ~finite, float("-inf")).max(-1).values
    return bool((lowest_kept >= highest_removed).all())


def reference(logits: torch.Tensor, p: float) -> torch.Tensor:
    return logits.masked_fill(~keep_mask(logits, p), float("-inf"))


run_case = calls(inputs)  # new tensors every call: nothing to clone


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


@expectation
def nucleus(case: dict) -> torch.Tensor:
    """True where top-p keeps the token (shipped for the visible cases)."""
    return keep_mask(*inputs(case))


@expectation
def off_by_one_nuclei(case: dict) -> dict:
    """The kept sets of the off-by-ones at p (shipped for the visible cases)."""
    logits, p = inputs(case)
    return {
        rule: keep_mask(logits, p, rule=rule) for rule in RULES if rule != "reference"
    }


@expectation
def gathered_nucleus(case: dict) -> torch.Tensor:
    """The kept set when the sorted mask is mapped back with gather, not
    scatter: token j gets the decision of rank order[j], the inverse of the
    permutation that was needed (shipped for the visible cases). Sorted as
    a learner sorts, the float32 logits themselves, so tied tokens fall in
    the same order."""
    logits, p = inputs(case)
    order = logits.sort(dim=-1, descending=True).indices
    probs = torch.softmax(logits.double(), dim=-1).gather(-1, order)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    keep_sorted[..., 0] = True
    return keep_sorted.gather(-1, order) & torch.isfinite(logits)


@expectation
def ascending_nucleus(case: dict) -> torch.Tensor:
    """The kept set when the logits are sorted ascending (descending=True
    forgotten): the rule run from the LEAST likely token up, keeping each
    while the tokens before it add up to less than p (shipped for the
    visible cases)."""
    logits, p = inputs(case)
    order = logits.sort(dim=-1).indices
    probs = torch.softmax(logits.double(), dim=-1).gather(-1, order)
    keep_sorted = probs.cumsum(dim=-1) - probs < p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return keep & torch.isfinite(logits)


def _from_least_likely(kept, case, expected_keep) -> bool:
    """Whether `kept` is the ascending nucleus, up to the order of ties (the
    bottom-ranked set: same_nucleus on the negated logits). Not where that
    set is every token (each row's top token above 1 - p): no filter at all
    gives it too."""
    logits, _ = inputs(case)
    finite = torch.isfinite(logits)
    ascending = ascending_nucleus(case)
    return (
        not torch.equal(ascending, finite)
        and not same_nucleus(ascending, expected_keep, logits)
        and same_nucleus(kept, ascending, -logits)
    )


def _wrong_set(got, case, expected_keep, kept) -> tuple[str, str] | None:
    """A mask mapped back with the inverse permutation (which may leave a
    row empty: checked first), an off-by-one at p, no top token, a nucleus
    built from the bottom, an output left sorted, or top-k."""
    logits, p = inputs(case)
    finite = torch.isfinite(logits)
    if torch.equal(kept & finite, gathered_nucleus(case)):
        return (
            "unsort-with-gather",
            f"p={p:g}: your kept set is the nucleus mapped back with gather, "
            "which applies the inverse of the permutation (order, the sort "
            "indices): token j got the verdict of rank order[j]. The verdict "
            "of rank r belongs to token order[r]: scatter it there",
        )
    if bool(((kept & finite).sum(-1) == 0).any()):
        return (
            "top-token-dropped",
            f"p={p:g}: a row of yours keeps no token at all, so its softmax is "
            "NaN: the most probable token is always kept, even when its "
            "probability alone exceeds p (a tiny p keeps exactly the top token)",
        )
    off_by_one = off_by_one_nuclei(case)
    for rule in ("drops-crossing", "drops-at-p"):
        if same_nucleus(kept, off_by_one[rule], logits):
            return (
                "nucleus-off-by-one",
                f"p={p:g}: at the boundary you keep one token too few: you drop "
                "the token whose probability carries the running total to or "
                "past p, so your nucleus holds LESS than p. Keep a token when "
                "the probability of the tokens ranked above it is still below p "
                "(cumsum - prob < p)",
            )
    if same_nucleus(kept, off_by_one["keeps-past-p"], logits):
        return (
            "nucleus-past-boundary",
            f"p={p:g}: at the boundary you keep one token too many: when the "
            "tokens ranked above a token already add up to exactly p, the "
            "nucleus is complete and that token goes. Keep a token only while "
            "the total above it is strictly below p (cumsum - prob < p, not <=)",
        )
    if _from_least_likely(kept, case, expected_keep):
        return (
            "nucleus-from-least-likely",
            f"p={p:g}: your kept set is the nucleus built from the LEAST likely "
            "tokens up: the logits were sorted ascending (sort's default). Rank "
            "the tokens most probable first, sort(dim=-1, descending=True), so "
            "the nucleus starts at the top token",
        )
    sorted_logits = logits.sort(dim=-1, descending=True).values
    counts = expected_keep.sum(-1, keepdim=True)
    in_rank_order = torch.arange(logits.shape[-1]) < counts
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
        and same_nucleus(kept, _top_k(logits, int(counts[0])), logits)
        and not same_nucleus(kept, expected_keep, logits)
    ):
        return (
            "top-k-not-top-p",
            f"you keep the same number of tokens ({int(counts[0])}) in every row: "
            "that is top-k. Top-p keeps as many as it takes to reach probability "
            "p, few in a peaked row and many in a flat one",
        )
    return None


def _diagnose(name, got, case, expected_keep, removed, hidden):
    """Name the mistake behind a wrong kept set or wrong kept values."""
    logits, _ = inputs(case)
    probs = torch.softmax(logits.double(), -1)
    found = _wrong_values(got, logits, probs, expected_keep) or _wrong_set(
        got, case, expected_keep, ~removed
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


def _kept_set_check(name, kept, expected_keep, p, logits, hidden) -> CheckResult:
    if same_nucleus(kept, expected_keep, logits):
        return CheckResult(
            f"{name}: kept tokens",
            True,
            f"p={p:g}: the same {int(kept.sum())} tokens kept in {kept.shape[0]} rows",
            hidden=hidden,
        )
    extra = int((kept & ~expected_keep).sum())
    lost = int((expected_keep & ~kept).sum())
    short = (kept.sum(-1) != expected_keep.sum(-1)).nonzero()
    row = (
        int(short[0])
        if len(short)
        else int((kept != expected_keep).any(-1).nonzero()[0])
    )
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
    expected_keep = nucleus(case)
    removed = (got == float("-inf")) | (got <= torch.finfo(torch.float32).min / 2)
    kept = ~removed & torch.isfinite(logits)
    results.append(_kept_set_check(name, kept, expected_keep, p, logits, hidden))
    if not results[-1].passed:
        mistake = _diagnose(name, got, case, expected_keep, removed, hidden)
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
    mistake = _diagnose(name, got, case, expected_keep, removed, hidden)
    results.append(
        fail(
            f"{name}: kept values",
            "the kept tokens are right but their values changed: return the "
            "original logits at kept positions (no softmax, no temperature)",
            hidden=hidden,
        )
    )
    return results + ([mistake] if mistake else [])
