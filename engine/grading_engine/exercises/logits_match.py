"""logits-match: the check that proves a weight port right, written by hand.

logits_report(ours, theirs, atol) compares two (b, t, V) logit tensors and
returns {"max_abs", "worst", "top1_agree", "match"}: the largest absolute
difference, where it is ([b, t, v]), the fraction of positions whose argmax
agrees, and whether every logit is within atol. The cases are the mistakes a
port makes (a transposed square projection on the reference `mini` model, a
constant shift per position, one bad position, float noise) and the
mistakes a checker makes: comparing probabilities (blind to a shift),
averaging instead of taking the max (blind to one bad position), taking the
argmax over the wrong axis. Two hidden cases put max_abs exactly at and just
above atol with values no draw changes ("hidden: fixed max_abs ... atol").
"""

from __future__ import annotations

import copy
import random

import torch

from grading_engine.checks.fingerprints import distinct_match
from grading_engine.checks.in_place import input_changes
from grading_engine.checks.learner_calls import call_learner
from grading_engine.checks.result import CheckResult, fail, likely_mistake
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import as_items, plain_float, plain_int, type_name
from grading_engine.reference.cache import reference_model

SLUG = "logits-match"
ENTRY_POINT = "logits_report"
SIGNATURE = "logits_report(ours, theirs, atol) -> dict"

KEYS = ("max_abs", "worst", "top1_agree", "match")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("float noise only: a match", False,
                 kind="noise", shape=[2, 5, 53], atol=1e-4, seed=1),
        new_case("mini model, c_proj loaded untransposed", False,
                 kind="transposed", shape=[2, 6], atol=1e-4, seed=2),
        # Top-1 agreement is per position: one flipped argmax in 2 x 4
        # positions is 7/8, where a share of whole sequences would say 1/2.
        new_case("one argmax flipped in 8 positions", False,
                 kind="flip", shape=[2, 4, 29], atol=1e-4, seed=3),
        new_case("hidden: a constant shift per position", True, kind="shift",
                 shape=[rng.randint(2, 3), rng.randint(4, 8), 89], atol=1e-4,
                 seed=rng.randrange(2**31)),
        new_case("hidden: one position off", True, kind="one",
                 shape=[rng.randint(2, 4), rng.randint(6, 12), 131],
                 atol=rng.choice([1e-4, 1e-3]), seed=rng.randrange(2**31)),
        new_case("hidden: noise at a looser tolerance", True, kind="noise",
                 shape=[rng.randint(1, 3), rng.randint(3, 9), 97], atol=1e-2,
                 seed=rng.randrange(2**31)),
    ]  # fmt: skip
    # The same boundary with values no draw changes, so that every grade
    # catches `max_abs < atol` (exactly at) and torch.allclose (just above).
    for step, what in ((0, "exactly at"), (1, "just above")):
        cases.append(
            new_case(
                f"hidden: fixed max_abs {what} atol",
                True,
                kind="boundary",
                step=step,
                shape=[2, 3, 61],
                atol=2.0**-10,
                seed=4242 + step,
            )
        )
    # The tolerance's boundary in every draw: max_abs exactly atol (a match:
    # max_abs <= atol), one float32 step below it and one above it. atol is a
    # power of two and the worst logit sits in [1, 2), so the difference is
    # exact in float32 and float64 alike.
    atol = rng.choice([2.0**-8, 2.0**-10, 2.0**-12])
    for step, what in ((0, "exactly at"), (-1, "just below"), (1, "just above")):
        cases.append(
            new_case(
                f"hidden: max_abs {what} atol",
                True,
                kind="boundary",
                step=step,
                shape=[rng.randint(1, 3), rng.randint(2, 8), 61],
                atol=atol,
                seed=rng.randrange(2**31),
            )
        )
    return cases


def inputs(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """(ours, theirs) for one case, both float32 (b, t, V)."""
    g = torch.Generator().manual_seed(case["seed"])
    if case["kind"] == "transposed":
        model = reference_model("mini")
        b, t = case["shape"]
        idx = torch.randint(0, model.config.vocab_size, (b, t), generator=g)
        broken = copy.deepcopy(model)
        with torch.no_grad():
            w = broken.transformer.h[1].attn.c_proj.weight
            w.copy_(w.t().clone())  # square, so it loads without a shape error
            return broken(idx), model(idx)
    theirs = torch.randn(*case["shape"], generator=g) * 3
    ours = theirs.clone()
    if case["kind"] == "noise":
        ours += torch.randn(*case["shape"], generator=g) * case["atol"] * 0.05
    elif case["kind"] == "shift":
        ours += torch.rand(*case["shape"][:2], 1, generator=g) * 4 + 1
    elif case["kind"] == "boundary":
        b, t, V = case["shape"]
        ours += torch.randn(*case["shape"], generator=g) * case["atol"] * 0.05
        i = int(torch.randint(0, b * t * V, (1,), generator=g))
        base = 1.0 + int(torch.randint(0, 4, (1,), generator=g)) / 8
        theirs.view(-1)[i] = base
        ours.view(-1)[i] = base + case["atol"] + case["step"] * 2.0**-23
    elif case["kind"] == "flip":
        b, t, V = case["shape"]
        i = int(torch.randint(0, b * t, (1,), generator=g))
        row = ours[i // t, i % t]
        j = (
            int(row.argmax()) + 1 + int(torch.randint(0, V - 1, (1,), generator=g))
        ) % V
        row[j] = row.max() + 1.0  # the argmax moves to j, at this position only
    elif case["kind"] == "one":
        b, t, V = case["shape"]
        i = int(torch.randint(0, b * t, (1,), generator=g))
        ours[i // t, i % t] += torch.randn(V, generator=g) * 0.5
    return ours, theirs


def reference(ours: torch.Tensor, theirs: torch.Tensor, atol: float) -> dict:
    diff = (ours.double() - theirs.double()).abs()
    flat = int(diff.flatten().argmax())
    worst = [int(i) for i in torch.unravel_index(torch.tensor(flat), diff.shape)]
    agree = (ours.argmax(-1) == theirs.argmax(-1)).double().mean().item()
    max_abs = diff.max().item()
    return {
        "max_abs": max_abs,
        "worst": worst,
        "top1_agree": agree,
        "match": bool(max_abs <= atol),
    }


def run_case(fn, case: dict):
    ours, theirs = inputs(case)
    value, error = call_learner(fn, ours.clone(), theirs.clone(), case["atol"])
    if error:
        return {"error": error}, {}
    if not isinstance(value, dict):
        return {"error": None, "type": type_name(value)}, {}
    out: dict = {"error": None, "type": "builtins.dict"}
    for key in KEYS:
        item = value.get(key) if key in value else None
        if isinstance(item, torch.Tensor) and item.numel() == 1:
            item = item.reshape(()) if key == "worst" else item.item()
        if key == "worst":
            found = as_items(item, limit=8)
            index = [plain_int(i) for i in (found[0] if found else [None])]
            if index and None not in index:  # a tuple, a list, a tensor, an array
                out[key] = index[:8]
            else:
                out[key] = {"bad_type": type_name(item)}
        elif key == "match":
            out[key] = _plain_bool(item)
        else:
            number = plain_float(item)
            out[key] = number if number is not None else {"bad_type": type_name(item)}
    return out, {}


def _plain_bool(item):
    """A bool, a numpy bool or a 0-d bool tensor as a bool; else its type."""
    if type(item) is bool:
        return item
    if type_name(item) in ("numpy.bool", "numpy.bool_"):
        return bool(item)
    return {"bad_type": type_name(item)}


def _key_check(name, key, got, want, case, hidden) -> CheckResult:
    """One entry of the report against the reference's."""
    check = f"{name}: {key}"
    if isinstance(got, dict):
        return fail(check, f"{key} has type {got.get('bad_type', '?')}", hidden=hidden)
    if key == "worst" and isinstance(got, list) and got != want[key]:
        ok = _is_a_worst(got, *inputs(case), want["max_abs"])
    elif key in ("max_abs", "top1_agree"):
        ok = isinstance(got, float) and abs(got - want[key]) <= 1e-5 * max(
            1.0, abs(want[key])
        )
    else:
        ok = got == want[key]
    if ok:
        return CheckResult(check, True, f"{key} = {got}", hidden=hidden)
    return fail(check, f"expected {key} = {want[key]!r}, got {got!r}", hidden=hidden)


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The answer's checks, and one for an argument changed in place."""
    changed = input_changes(case["name"], data, hidden=bool(case["hidden"]))
    return changed + _check_answer(case, data, tensors)


def _check_answer(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data):
        return raised
    if data.get("type") != "builtins.dict":
        return [
            fail(
                name,
                f"expected a dict with keys {', '.join(KEYS)}, got a "
                f"{data.get('type', '?')}",
                hidden=hidden,
            )
        ]
    want = report(case)
    results = [_key_check(name, key, data.get(key), want, case, hidden) for key in KEYS]
    if all(r.passed for r in results):
        return results
    diagnosis = _diagnose(known_numbers(case), data, want, case["atol"])
    if diagnosis := diagnosis or _diagnose_worst(case, data.get("worst"), want):
        slug, message = diagnosis
        results.append(likely_mistake(name, message, diagnosis=slug, hidden=hidden))
    return results


@expectation
def report(case: dict) -> dict:
    """The right report (shipped for the visible cases)."""
    ours, theirs = inputs(case)
    return reference(ours, theirs, case["atol"])


@expectation
def known_numbers(case: dict) -> dict:
    """The numbers the known mistakes report (shipped for the visible cases)."""
    ours, theirs = inputs(case)
    signed = ours.double() - theirs.double()
    p = torch.softmax(ours.double(), -1) - torch.softmax(theirs.double(), -1)
    same = (ours.argmax(-1) == theirs.argmax(-1)).double()
    return {
        "signed_max": [signed.max().item(), (-signed).max().item()],
        "probabilities": p.abs().max().item(),
        "mean": signed.abs().mean().item(),
        "agree_count": same.sum().item(),
        "agree_fraction": same.mean().item(),
        "agree_sequences": same.reshape(same.shape[0], -1)
        .all(-1)
        .double()
        .mean()
        .item(),
        "positions": same.numel(),
        "wrong_axis": (ours.argmax(1) == theirs.argmax(1)).double().mean().item(),
        "allclose": torch.allclose(ours, theirs, atol=case["atol"]),
    }


def _is_a_worst(index: list, ours, theirs, max_abs: float) -> bool:
    """Ties: any position whose difference equals the maximum is right."""
    if len(index) != ours.dim() or any(
        not 0 <= i < n for i, n in zip(index, ours.shape, strict=True)
    ):
        return False
    d = abs(float(ours[tuple(index)]) - float(theirs[tuple(index)]))
    return d >= max_abs * (1 - 1e-5) - 1e-12


def _matches(got: float, wrong: float, right: float) -> bool:
    """`got` is the known wrong number (to 1e-6, and distinctly: see
    fingerprints.distinct_match), not the right one."""
    return abs(got - wrong) <= 1e-6 * max(1.0, abs(wrong)) and distinct_match(
        abs(got - wrong), abs(wrong - right), abs(got - right)
    )


def _diagnose_match(known, atol, data, want):
    """A wrong `match` at the tolerance's boundary, when max_abs itself is
    right (a wrong max_abs explains a wrong match, and is named below)."""
    got, got_max = data.get("match"), data.get("max_abs")
    if not isinstance(got, bool) or got == want["match"]:
        return None
    if not isinstance(got_max, float) or abs(got_max - want["max_abs"]) > 1e-6 * max(
        1.0, want["max_abs"]
    ):
        return None
    if want["max_abs"] == atol and got is False:
        return (
            "tolerance-boundary",
            f"max_abs is exactly atol ({atol:g}) here and you reported no "
            "match: within atol means max_abs <= atol (the boundary "
            "included), not max_abs < atol",
        )
    close = known["allclose"]  # default rtol=1e-5
    if got is True and close:
        return (
            "allclose-rtol",
            "your match agrees with torch.allclose(ours, theirs, atol=atol), "
            "whose default rtol=1e-5 adds 1e-5 * |theirs| to the tolerance: "
            "here max_abs is just above atol, so it is not a match. Compare "
            "max_abs <= atol (or pass rtol=0)",
        )
    return None


# What a wrong max_abs or top1_agree is when it is a known slip's number:
# (diagnosis, why), tried in the order _diagnose lists them.
MISSING_ABS = (
    "missing-abs",
    "your max_abs is the largest SIGNED difference: a logit that is too low "
    "by more than any other is too high never shows. Take the absolute value "
    "first, (ours - theirs).abs()",
)
COMPARED_PROBABILITIES = (
    "compared-probabilities",
    "your max_abs is measured on probabilities: softmax hides a constant "
    "shift of a position's logits (and shrinks every difference among small "
    "probabilities). A port must match the LOGITS, so compare them directly",
)
MEAN_NOT_MAX = (
    "mean-not-max",
    "your max_abs is the MEAN absolute difference: one wrong position among "
    "many barely moves a mean. Use the maximum, and report where it is",
)
PER_SEQUENCE = (
    "top1-per-sequence",
    "your top1_agree is the share of whole sequences whose every argmax "
    "agrees: it is the share of POSITIONS, since each position predicts a "
    "token of its own. Compare ours.argmax(-1) with theirs.argmax(-1) and "
    "take the mean over all b * t positions",
)
ARGMAX_WRONG_AXIS = (
    "argmax-wrong-axis",
    "your top-1 agreement takes the argmax over the time axis: the next-token "
    "prediction at each position is the argmax over the vocabulary, the last "
    "axis (dim=-1)",
)


def _diagnose_worst(case: dict, got, want: dict) -> tuple[str, str] | None:
    """A worst index unravelled by hand with t = flat // V, the modulo T
    left out: its time index then counts the positions of the rows before
    it too, b * T + t. Named only where the worst logit is past row 0 (in
    row 0 that index is right)."""
    if not isinstance(got, list) or len(got) != 3:
        return None
    ours, theirs = inputs(case)
    b, t, v = got
    T = ours.shape[1]
    if not 0 < b < ours.shape[0] or t // T != b:
        return None
    if not _is_a_worst([b, t % T, v], ours, theirs, want["max_abs"]):
        return None
    return (
        "unravel-missing-modulo",
        f"your worst index has time {t}, but a row has {T} positions, "
        f"0..{T - 1}: "
        "flat // V counts every position before the worst one, those of the "
        "earlier rows too. Take it modulo T (or use torch.unravel_index) so "
        "the time index restarts in each row",
    )


def _first_slip(got: float, right: float, slips: list) -> tuple[str, str] | None:
    """(diagnosis, why) of the first (number, diagnosis, why) that `got` is."""
    for wrong, diagnosis, why in slips:
        if _matches(got, wrong, right):
            return diagnosis, why
    return None


def _diagnose(known, data, want, atol=None):
    if atol is not None and (found := _diagnose_match(known, atol, data, want)):
        return found
    got_max = data.get("max_abs")
    if isinstance(got_max, float):
        slips = [(signed, *MISSING_ABS) for signed in known["signed_max"]]
        slips.append((known["probabilities"], *COMPARED_PROBABILITIES))
        slips.append((known["mean"], *MEAN_NOT_MAX))
        if found := _first_slip(got_max, want["max_abs"], slips):
            return found
    agree = data.get("top1_agree")
    if not isinstance(agree, float):
        return None
    count, fraction = known["agree_count"], known["agree_fraction"]
    slips = [(known["wrong_axis"], *ARGMAX_WRONG_AXIS)]
    if "agree_sequences" in known:  # bundles shipped before it lack it
        slips.append((known["agree_sequences"], *PER_SEQUENCE))
    if count != fraction:
        counted = (
            "count-not-fraction",
            f"your top1_agree is the NUMBER of agreeing positions ({agree:g} of "
            f"{known['positions']}): report the fraction, the mean over the "
            "b * t positions (a number in [0, 1])",
        )
        slips.insert(0, (count, *counted))
    return _first_slip(agree, want["top1_agree"], slips)
