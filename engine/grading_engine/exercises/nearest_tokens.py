"""nearest-tokens: the k rows of an embedding table closest in direction to one row.

Closeness is cosine similarity, so the tables in the cases have rows of very
different lengths: a ranking by raw dot product, or one that normalises the
wrong axis, gives a different list. The query row itself is excluded.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.in_place import input_changes
from grading_engine.checks.int_lists import read_int_list, unreadable
from grading_engine.checks.result import CheckResult, fail
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int_list
from grading_engine.reference.cache import reference_model

SLUG = "nearest-tokens"
ENTRY_POINT = "nearest_tokens"
SIGNATURE = "nearest_tokens(W, token_id, k) -> list[int]"

CAT = 3797  # " cat"
TOL = 1e-5  # cosines closer than this are treated as ties


def preload() -> None:
    reference_model("gpt2")


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("(97, 16) table with unequal row norms, token 3, k=5", False,
                 rows=97, width=16, token=3, k=5, seed=11),
        new_case("GPT-2 small wte, ' cat', k=5", False, gpt2=True, token=CAT, k=5),
    ]  # fmt: skip
    for i in range(4):
        rows = rng.choice([101, 173, 211, 389])
        cases.append(
            new_case(
                f"hidden {i + 1}",
                True,
                rows=rows,
                width=rng.choice([8, 12, 32, 48]),
                token=rng.randrange(rows),
                k=rng.randint(3, 12),
                seed=rng.randrange(2**31),
            )
        )
    return cases


def table(case: dict) -> torch.Tensor:
    """The (rows, width) table of a case; the same in the child and the parent."""
    if case.get("gpt2"):
        return reference_model("gpt2").transformer.wte.weight.detach()
    g = torch.Generator().manual_seed(case["seed"])
    directions = torch.randn(case["rows"], case["width"], generator=g)
    lengths = torch.empty(case["rows"], 1).uniform_(0.2, 3.0, generator=g)
    return directions * lengths  # norms that differ a lot, as in trained tables


def run_case(fn, case: dict):
    W = table(case).clone()  # a change in place fails (harness.inputs), but
    # must not reach the table other cases are built from
    result = fn(W, case["token"], case["k"])
    if isinstance(result, torch.Tensor) and not result.is_floating_point():
        result = result.tolist()  # a 1-d integer tensor is an honest answer
    return {"result": capture_int_list(result)}, {}


def _scores(W: torch.Tensor, token: int, how: str) -> torch.Tensor:
    W = W.double()
    if how == "cosine":
        unit = W / W.norm(dim=1, keepdim=True)
        return unit @ unit[token]
    if how == "dot":
        return W @ W[token]
    if how == "euclidean":  # nearer is higher
        return -(W - W[token]).norm(dim=1)
    if how == "columns":  # F.normalize(W, dim=0): each column to unit length
        unit = W / W.norm(dim=0, keepdim=True)
        return unit @ unit[token]
    raise ValueError(how)


def _top(scores: torch.Tensor, k: int, exclude: int | None) -> list[int]:
    scores = scores.clone()
    if exclude is not None:
        scores[exclude] = -float("inf")
    return scores.topk(k).indices.tolist()


def _known(W, token, k) -> list:
    """The top k of each known mistake, with its diagnosis and hint."""
    return [
        (
            _top(_scores(W, token, "dot"), k, token),
            "ranked-by-dot-product",
            "that is the ranking by raw dot product W @ W[token_id]: long rows "
            "then look similar to everything. Divide each row by its norm first "
            "(F.normalize(W, dim=1)) so only directions are compared",
        ),
        (
            _top(_scores(W, token, "cosine"), k, None),
            "included-query-token",
            f"your list contains token {token} itself, whose cosine with itself "
            "is 1: exclude it (set its score to -inf before topk)",
        ),
        (
            _top(_scores(W, token, "columns"), k, token),
            "normalised-wrong-axis",
            "that ranking comes from normalising the columns (dim=0); each ROW is "
            "a token's vector, so normalise along dim=1",
        ),
        (
            _top(-_scores(W, token, "cosine"), k, token),
            "sorted-ascending",
            "those are the k LEAST similar rows, least similar first: "
            "argsort and sort are ascending by default; take the highest "
            "cosines first (topk, or argsort(descending=True))",
        ),
        (
            _top(_scores(W, token, "euclidean"), k, token),
            "euclidean-distance",
            "that is the ranking by Euclidean distance, which mixes length "
            "with direction: rows of different lengths are far apart even "
            "when they point the same way. Rank by cosine similarity, the "
            "dot product of the normalised rows",
        ),
    ]


@expectation
def neighbours(case: dict) -> dict:
    """The cosines and the top k (shipped for the visible cases)."""
    W, token, k = table(case), case["token"], case["k"]
    scores = _scores(W, token, "cosine")
    return {
        "scores": scores,
        "expected": _top(scores, k, token),
        "rows": W.shape[0],
        "with_query": _top(scores, k, None),
    }


@expectation
def known_mistakes(case: dict) -> list:
    """The top k of each known mistake (shipped for the visible cases)."""
    return _known(table(case), case["token"], case["k"])


def _diagnose(shipped: dict, case: dict, got):
    token, k = case["token"], case["k"]
    known, expected = known_mistakes(case), shipped["expected"]
    for value, diagnosis, hint in known:
        if value == got and value != expected:
            return diagnosis, hint
    if token in got:
        return known[1][1], known[1][2]
    with_query = shipped["with_query"]
    if token in with_query and got == [i for i in with_query if i != token]:
        return "excluded-after-topk", (
            f"you took the top k = {k} and then removed token {token}, which "
            f"was among them, so only {k - 1} ids are left: exclude the token "
            "BEFORE taking the top k (set its score to -inf), or take k + 1 "
            "and drop it"
        )
    if got == expected[::-1]:
        return "wrong-order", "the right tokens, least similar first: sort descending"
    return None, ""


def _form_problem(name, read, k, expected, hidden) -> CheckResult | None:
    """A failed check when the answer is not a whole list of plain ints."""
    if read.not_a_list:
        shown, kind = read.not_a_list
        return fail(
            name,
            f"expected a list of {k} token ids, got {shown} of type {kind}",
            expected=str(expected),
            got=f"{shown} ({kind})"[:200],
            diagnosis="not-a-list",
            hidden=hidden,
        )
    if read.unreadable:
        return unreadable(name)
    if read.bad_item or not read.complete:
        shown = read.bad_item or {"repr": "?", "type": "?"}
        return fail(
            name,
            f"every entry must be a plain int token id; got {shown.get('repr')} "
            f"of type {shown.get('type')} (scores are not ids: use the "
            "indices that topk returns)",
            expected="list[int]",
            got=str(shown.get("type")),
            diagnosis="not-an-int",
            hidden=hidden,
        )
    return None


def _is_nearest(got, scores, expected, token, k) -> bool:
    """Equal to the reference up to ties: same cosines, in the same order."""
    rows = scores.shape[0]
    if not all(0 <= g < rows for g in got):
        return False
    if len(got) != k or len(set(got)) != k or token in got:
        return False
    return bool(torch.allclose(scores[got], scores[expected], atol=TOL, rtol=0))


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    """The answer's checks, and one for an argument changed in place."""
    changed = input_changes(case["name"], data, hidden=bool(case["hidden"]))
    return changed + _check_answer(case, data, tensors)


def _check_answer(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden = bool(case["hidden"])
    name = f"{case['name']}: neighbours"
    token, k = case["token"], case["k"]
    shipped = neighbours(case)
    scores, expected = shipped["scores"], shipped["expected"]
    read = read_int_list(data.get("result"))
    if problem := _form_problem(name, read, k, expected, hidden):
        return [problem]
    got = read.values
    if _is_nearest(got, scores, expected, token, k):
        message = f"the {k} nearest rows, most similar first"
        return [CheckResult(name, True, message, hidden=hidden)]
    rows = shipped["rows"]
    in_range = all(0 <= g < rows for g in got)
    diagnosis, hint = _diagnose(shipped, case, got) if in_range else (None, "")
    message = f"expected {expected}, got {got[:20]}"
    if len(got) != k:
        message += f" ({len(got)} ids instead of k = {k})"
    elif not in_range:
        message += f": ids must be row indices 0..{rows - 1}"
    if hint:
        message += f": {hint}"
    return [
        fail(
            name,
            message,
            expected=str(expected),
            got=str(got[:20]),
            diagnosis=diagnosis,
            hidden=hidden,
        )
    ]
