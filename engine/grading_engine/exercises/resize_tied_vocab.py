"""resize-tied-vocab: grow a tied GPT's vocabulary and keep the head tied.

Replacing `transformer.wte` with a bigger nn.Embedding leaves `lm_head`
holding the OLD Parameter: the tie is silently broken. The learner must
keep the old rows, set the new rows to the mean of the old ones (so they
start with ordinary logits) and share the new table with the head. The
child reports identities, shapes and values after the call and runs one
forward pass; the parent recomputes what the table must hold.
"""

from __future__ import annotations

import random

import torch

from grading_engine.checks.in_place import MODEL_CHANGE_KINDS
from grading_engine.checks.learner_calls import call_learner
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import capture_int, type_name
from grading_engine.reference import build_model, get_config

SLUG = "resize-tied-vocab"
ENTRY_POINT = "resize_vocab"
SIGNATURE = "resize_vocab(model, new_vocab_size) -> None"
# Resizing is the exercise: check_case judges the structure left behind.
MODEL_CHANGES = MODEL_CHANGE_KINDS

ATOL = 1e-6


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    specs = [
        ("tiny: 97 -> 128", "tiny", False, 128),
        ("mini: 211 -> 256", "mini", False, 256),
        ("hidden tiny", "tiny", True, rng.randint(98, 160)),
        ("hidden mini", "mini", True, rng.randint(212, 300)),
    ]
    # The boundary in every draw: exactly one new row (new_vocab = vocab + 1),
    # where a slice or a mean that starts one row late shows; the config is
    # drawn, the coverage is not.
    edge = rng.choice(("tiny", "mini"))
    specs.append(
        (f"hidden {edge}: one new row", edge, True, get_config(edge).vocab_size + 1)
    )
    cases = []
    for name, config, hidden, new_vocab in specs:
        c = get_config(config)
        # A visible case draws from its position, so it is the same every attempt.
        draw = rng if hidden else random.Random(len(cases))
        cases.append(
            new_case(
                name,
                hidden,
                config=config,
                seed=rng.randrange(2**31) if hidden else len(cases),
                new_vocab=new_vocab,
                idx=[[draw.randrange(new_vocab) for _ in range(5)]],
                n_embd=c.n_embd,
            )
        )
    return cases


# -- child --------------------------------------------------------------------


def run_case(fn, case: dict):
    model = build_model(case["config"], seed=case["seed"])  # tied
    _, error = call_learner(fn, model, case["new_vocab"])
    if error:
        return {"error": error}, {}
    wte = model.transformer.wte.weight
    head = model.lm_head.weight
    registered = {id(p) for p in model.parameters()}
    facts = {
        "error": None,
        "same_object": head is wte,
        "same_storage": head.untyped_storage().data_ptr()
        == wte.untyped_storage().data_ptr(),
        "equal_values": bool(
            head.shape == wte.shape and torch.equal(head.detach(), wte.detach())
        ),
        "wte_shape": list(wte.shape),
        "head_shape": list(head.shape),
        "wte_type": type_name(wte),
        "wte_registered": id(wte) in registered,
        "distinct": capture_int(sum(p.numel() for p in model.parameters())),
    }
    tensors = {"wte": wte.detach().clone()}
    try:
        with torch.no_grad():
            logits = model(torch.tensor(case["idx"]))
        facts["logits_shape"] = list(logits.shape)
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        facts["forward_error"] = f"{type(exc).__name__}: {exc}"[:300]
    return facts, tensors


# -- parent -------------------------------------------------------------------


@expectation
def expected_table(case: dict) -> torch.Tensor:
    old = build_model(case["config"], seed=case["seed"]).transformer.wte.weight
    old = old.detach()
    extra = case["new_vocab"] - old.shape[0]
    return torch.cat([old, old.mean(dim=0, keepdim=True).expand(extra, -1)])


def _forward_check(name, case, data, hidden) -> CheckResult:
    """The resized model still runs and scores every row of the new table."""
    shape = data.get("logits_shape")
    want = [1, len(case["idx"][0]), case["new_vocab"]]
    ok = shape == want
    message = (
        f"the model runs and returns logits {tuple(want)}"
        if ok
        else "after your call the forward pass "
        + (
            f"failed ({data.get('forward_error')})"
            if data.get("forward_error")
            else f"returned logits of shape {shape}, expected {tuple(want)}"
        )
        + ": the head must score all of the new vocabulary's rows"
    )
    return CheckResult(f"{name}: forward pass", ok, message, hidden=hidden)


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    if raised := case_error(case, data):
        return raised
    hidden, name = bool(case["hidden"]), case["name"]
    V_old = get_config(case["config"]).vocab_size
    V_new, d = case["new_vocab"], case["n_embd"]
    expected = expected_table(case)
    table = _table_check(name, data, tensors.get("wte"), expected, V_old, hidden)
    return [
        _tie_check(name, data, V_old, V_new, d, hidden),
        table,
        _forward_check(name, case, data, hidden),
    ]


def _shared_check(check, data, hidden) -> CheckResult:
    """One Parameter for both: it must still be registered, and a Parameter."""
    registered = data.get("wte_registered") is True
    is_param = data.get("wte_type") == "torch.nn.parameter.Parameter"
    if registered and is_param:
        return CheckResult(
            check, True, "lm_head.weight is transformer.wte.weight", hidden=hidden
        )
    return fail(
        check,
        f"the shared weight is a {data.get('wte_type')} that model.parameters() "
        + ("yields" if registered else "does not yield")
        + ": make it an nn.Parameter registered on the embedding module",
        hidden=hidden,
    )


def _tie_check(name, data, V_old, V_new, d, hidden) -> CheckResult:
    check = f"{name}: head tied to the new table"
    if data.get("same_object") is True:
        return _shared_check(check, data, hidden)
    head_shape = data.get("head_shape")
    if head_shape == [V_old, d]:
        return fail(
            check,
            f"lm_head.weight is still the OLD ({V_old}, {d}) Parameter: replacing "
            "transformer.wte made a new tensor and the head kept the old one. "
            "Re-tie after resizing: "
            "model.lm_head.weight = model.transformer.wte.weight",
            expected=f"one ({V_new}, {d}) Parameter",
            got=f"head ({V_old}, {d}), table ({V_new}, {d})",
            diagnosis="tie-broken",
            hidden=hidden,
        )
    if data.get("same_storage") is True:
        return fail(
            check,
            "the head and the table share storage through .data but are two "
            "Parameters: each would collect only its own gradient. Assign the "
            "Parameter itself",
            diagnosis="aliased-data",
            hidden=hidden,
        )
    if data.get("equal_values") is True:
        return fail(
            check,
            f"the head holds a COPY of the new table ({V_new * d:,} extra elements): "
            "equal now, but the two will drift apart after the first optimizer "
            "step. Share it: model.lm_head.weight = model.transformer.wte.weight",
            diagnosis="copied-not-shared",
            hidden=hidden,
        )
    return fail(
        check,
        f"lm_head.weight ({head_shape}) is not the embedding's Parameter",
        diagnosis="tie-broken",
        hidden=hidden,
    )


def _table_check(name, data, got, expected, V_old, hidden) -> CheckResult:
    check = f"{name}: rows of the new table"
    if not isinstance(got, torch.Tensor) or list(got.shape) != list(expected.shape):
        return fail(
            check,
            f"transformer.wte.weight has shape {data.get('wte_shape')}, expected "
            f"{list(expected.shape)}",
            hidden=hidden,
        )
    old, new = got[:V_old], got[V_old:]
    if not torch.equal(old, expected[:V_old]):
        return fail(
            check,
            f"the first {V_old} rows changed: resizing must keep every trained "
            "row exactly (copy them into the new table)",
            diagnosis="old-rows-changed",
            hidden=hidden,
        )
    if torch.allclose(new, expected[V_old:], atol=ATOL, rtol=1e-5):
        return CheckResult(
            check, True, "old rows kept, new rows at the mean row", hidden=hidden
        )
    ratio = new.norm(dim=1).mean() / expected[:V_old].norm(dim=1).mean()
    if ratio > 5:
        return fail(
            check,
            f"the new rows are {ratio:.0f} times longer than the old ones (the "
            "default nn.Embedding init is N(0, 1)): their logits would swamp the "
            "softmax in every context. Set them to the mean of the old rows",
            diagnosis="new-rows-too-long",
            hidden=hidden,
        )
    return fail(
        check,
        "the new rows are not the mean of the old rows "
        "(old.mean(dim=0) for each new row)",
        diagnosis="new-rows-not-mean",
        hidden=hidden,
    )
