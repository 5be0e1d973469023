"""weight-decay-groups: split a model's parameters into decay / no-decay.

The rule graded here is the classic one (minGPT's configure_optimizers): the
weight of every nn.Linear is decayed; biases, LayerNorm parameters and
embedding tables are not; a tensor shared by an Embedding and a Linear (a
tied head) is an embedding, so it is not decayed; every parameter appears
exactly once, under the name model.named_parameters() gives it. Cases are
the reference GPT (tied and untied) and small random modules whose names do
not give the answer away, so only a rule based on module types passes; one
fixed hidden model ties a head registered before its embedding.
"""

from __future__ import annotations

import random

import torch.nn as nn

from grading_engine.checks.learner_calls import call_learner
from grading_engine.checks.result import CheckResult, fail, likely_mistake
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.expected import expectation
from grading_engine.harness.capture import type_name
from grading_engine.reference import build_model

SLUG = "weight-decay-groups"
ENTRY_POINT = "param_groups"
SIGNATURE = "param_groups(model) -> tuple[list[str], list[str]]"

_NAMES = [
    "mixer",
    "pre",
    "lookup",
    "gain",
    "out",
    "proj",
    "stem",
    "table",
    "scale",
    "head",
    "read",
    "tail",
    "core",
    "shift",
]
_MAX_NAMES = 5000


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("reference tiny GPT (tied head)", False, gpt="tiny", tied=True),
        new_case("reference mini GPT, untied head", False, gpt="mini", tied=False),
        new_case(
            "a small tied model",
            False,
            layers=[
                ["embedding", "lookup", 11, 6],
                ["layernorm", "pre", 6],
                ["linear", "mixer", 6, 6, True],
                ["linear", "head", 6, 11, False],
            ],
            tie=["lookup", "head"],
        ),
    ]
    for i in range(3):
        names = rng.sample(_NAMES, 6)
        d, v = rng.choice([4, 6, 8]), rng.choice([7, 13, 17])
        layers = [
            ["embedding", names[0], v, d],
            ["layernorm", names[1], d],
            ["linear", names[2], d, 2 * d, rng.random() < 0.7],
            ["layernorm", names[3], 2 * d],
            ["linear", names[4], 2 * d, d, rng.random() < 0.7],
            ["linear", names[5], d, v, False],
        ]
        rng.shuffle(layers)
        # Every draw ties the head to the embedding registered after it once
        # and before it once, so a rule that depends on which of the two
        # modules comes first fails every attempt; the third case is drawn.
        tie = [names[0], names[5]] if i < 2 or rng.random() < 0.6 else None
        if i < 2:
            first, second = sorted(
                (j for j, layer in enumerate(layers) if layer[1] in tie),
            )
            embedding_first = layers[first][0] == "embedding"
            if embedding_first != (i == 0):
                layers[first], layers[second] = layers[second], layers[first]
        cases.append(
            new_case(f"hidden random module {i + 1}", True, layers=layers, tie=tie)
        )
    # The same in every draw: the tied head registered BEFORE its embedding
    # (the visible tied model lists the embedding first), so a rule that lets
    # the first module holding a tied tensor decide fails on any seed.
    cases.append(
        new_case(
            "hidden: a fixed tied model, head before the embedding",
            True,
            layers=[
                ["linear", "out", 5, 9, False],
                ["layernorm", "gain", 5],
                ["embedding", "table", 9, 5],
                ["linear", "core", 5, 5, True],
            ],
            tie=["table", "out"],
        )
    )
    return cases


def build(case: dict) -> nn.Module:
    if case.get("gpt"):
        return build_model(case["gpt"], tied=case["tied"])
    model = nn.Module()
    for kind, name, *dims in case["layers"]:
        if kind == "embedding":
            layer = nn.Embedding(dims[0], dims[1])
        elif kind == "layernorm":
            layer = nn.LayerNorm(dims[0])
        else:
            layer = nn.Linear(dims[0], dims[1], bias=dims[2])
        setattr(model, name, layer)
    if case.get("tie"):
        emb, lin = case["tie"]
        getattr(model, lin).weight = getattr(model, emb).weight
    return model


def reference(model: nn.Module) -> tuple[set[str], set[str]]:
    """(decay, no_decay) names, each parameter once, by the module-type rule."""
    embedding_tensors = {
        id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)
    }
    decay_tensors = {
        id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)
    } - embedding_tensors
    decay, no_decay = set(), set()
    for name, p in model.named_parameters():
        (decay if id(p) in decay_tensors else no_decay).add(name)
    return decay, no_decay


def _names(value) -> dict:
    if not isinstance(value, (list, tuple, set, frozenset)):
        return {"type": type_name(value), "items": None}
    items = list(value)[:_MAX_NAMES]
    if not all(type(x) is str for x in items):
        bad = next(x for x in items if type(x) is not str)
        return {"type": type_name(value), "items": None, "item_type": type_name(bad)}
    return {"type": type_name(value), "items": items}


def run_case(fn, case: dict):
    value, error = call_learner(fn, build(case))
    if error:
        return {"error": error}, {}
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        return {"error": None, "pair": False, "type": type_name(value)}, {}
    return {
        "error": None,
        "pair": True,
        "decay": _names(value[0]),
        "no_decay": _names(value[1]),
    }, {}


def _show(names) -> str:
    names = sorted(names)
    return ", ".join(names[:4]) + (
        f" (+{len(names) - 4} more)" if len(names) > 4 else ""
    )


def _read_groups(name, data, hidden) -> tuple[dict | None, list[CheckResult]]:
    """The two lists of names, or the failed check that says why not."""
    if not data.get("pair"):
        return None, [
            fail(
                name,
                f"expected a pair (decay_names, no_decay_names), got a "
                f"{data.get('type', '?')}",
                hidden=hidden,
            )
        ]
    groups = {}
    for key in ("decay", "no_decay"):
        got = data.get(key) or {}
        if got.get("items") is None:
            what = got.get("item_type") or got.get("type", "?")
            return None, [
                fail(
                    name,
                    f"{key}: expected a list of parameter NAMES (str), "
                    f"got {what}: use model.named_parameters() and return "
                    "the names",
                    hidden=hidden,
                )
            ]
        groups[key] = got["items"]
    return groups, []


@expectation
def groups_of(case: dict) -> dict:
    """The two groups and the facts the diagnoses read (shipped for the
    visible cases)."""
    model = build(case)
    decay, no_decay = reference(model)
    return {
        "decay": sorted(decay),
        "no_decay": sorted(no_decay),
        "aliases": sorted(_tied_aliases(model)),
        "tied_names": sorted(_tied_names(model)),
        "kinds": _kinds(model),
    }


def _each_once(name, known, got_decay, got_no, all_names, hidden) -> list[CheckResult]:
    """Every parameter in exactly one group, under its own name."""
    results = []
    twice = [n for n in set(got_decay) & set(got_no)]
    dupes = {n for n in got_decay if got_decay.count(n) > 1} | {
        n for n in got_no if got_no.count(n) > 1
    }
    unknown = (set(got_decay) | set(got_no)) - all_names
    shared_alias = set(known["aliases"])
    if unknown & shared_alias or twice or dupes:
        counted = sorted((unknown & shared_alias) | set(twice) | dupes)
        results.append(
            fail(
                f"{name}: each parameter once",
                f"{_show(counted)} counted twice or under a second name: a tied "
                "tensor has two names but is ONE parameter, and "
                "model.named_parameters() lists it once. Loop over "
                "named_parameters() and decide per tensor, or the optimizer "
                "gets the same tensor in two groups (PyTorch raises)",
                diagnosis="counted-shared-twice",
                hidden=hidden,
            )
        )
    elif unknown:
        results.append(
            fail(
                f"{name}: names",
                f"these are not parameter names of the model: {_show(unknown)}",
                hidden=hidden,
            )
        )
    missing = all_names - set(got_decay) - set(got_no)
    if missing:
        results.append(
            fail(
                f"{name}: every parameter",
                f"these parameters are in neither group: {_show(missing)}",
                hidden=hidden,
            )
        )
    return results


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data):
        return raised
    groups, problems = _read_groups(name, data, hidden)
    if problems:
        return problems
    known = groups_of(case)
    decay, no_decay = set(known["decay"]), set(known["no_decay"])
    got_decay, got_no = groups["decay"], groups["no_decay"]
    results = _each_once(name, known, got_decay, got_no, decay | no_decay, hidden)
    wrongly_decayed = set(got_decay) & no_decay
    wrongly_spared = set(got_no) & decay
    if decay != no_decay and set(got_decay) == no_decay and set(got_no) == decay:
        return results + [
            likely_mistake(
                name,
                "your two groups are swapped: the first list holds the biases, "
                "norms and embeddings, the second the Linear weights. Return "
                "(decay_names, no_decay_names), decay first, in that order",
                diagnosis="swapped-groups",
                hidden=hidden,
            )
        ]
    if wrongly_decayed or wrongly_spared:
        return results + [
            _diagnose(name, known, wrongly_decayed, wrongly_spared, hidden)
        ]
    if results:
        return results
    return [
        CheckResult(
            f"{name}: groups",
            True,
            f"{len(decay)} decayed (Linear weights), {len(no_decay)} not "
            "(biases, norms, embeddings)",
            hidden=hidden,
        )
    ]


def _tied_aliases(model: nn.Module) -> set[str]:
    """Names a shared tensor has besides the one named_parameters() keeps."""
    aliases = set()
    kept = {n for n, _ in model.named_parameters()}
    for n, _ in model.named_parameters(remove_duplicate=False):
        if n not in kept:
            aliases.add(n)
    return aliases


def _tied_names(model: nn.Module) -> set[str]:
    """The kept names of tensors that an Embedding shares with another module."""
    owners: dict[int, int] = {}
    for module in model.modules():
        for p in module.parameters(recurse=False):
            owners[id(p)] = owners.get(id(p), 0) + 1
    embedding = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    return {
        n
        for n, p in model.named_parameters()
        if id(p) in embedding and owners.get(id(p), 0) > 1
    }


def _kinds(model: nn.Module) -> dict[str, str]:
    """Parameter name -> 'embedding', 'norm', 'bias' or 'linear', by owner type.

    Keyed by tensor, so a tied tensor listed under the Linear's name is still
    an embedding.
    """
    by_id: dict[int, str] = {}
    for module in model.modules():
        for pname, p in module.named_parameters(recurse=False):
            if isinstance(module, nn.Embedding):
                kind = "embedding"
            elif isinstance(module, nn.LayerNorm):
                kind = "norm"
            else:
                kind = "bias" if pname == "bias" else "linear"
            if by_id.get(id(p)) != "embedding":
                by_id[id(p)] = kind
    return {n: by_id.get(id(p), "?") for n, p in model.named_parameters()}


# (diagnosis, explanation) of each rule that decays the wrong tensors.
NAME_RULE = (
    "name-based-rule",
    "Parameter names are not a reliable guide (a LayerNorm need not "
    "be called 'ln', an embedding need not be 'wte'): decide from the "
    "module that owns each tensor, e.g. isinstance(module, nn.Linear)",
)
EMBEDDINGS = (
    "decayed-embeddings",
    "You decayed the embedding tables, as a p.dim() >= 2 rule "
    "does (nanoGPT's choice). This exercise uses the classic rule: an "
    "embedding row is only updated when its token appears, so decay "
    "would keep shrinking rare tokens' rows between their updates; "
    "decay only nn.Linear weights",
)
NORMS = (
    "decayed-norms",
    "You decayed LayerNorm weights: decay pulls them toward 0, "
    "not toward their natural value 1, so it fights the normalisation. "
    "Decide by module type: LayerNorm parameters are never decayed",
)
BIASES = (
    "decayed-biases",
    "You decayed biases: they are few, do not multiply the "
    "input, and decaying them only biases the model; never decay them",
)
OTHER = (
    "name-based-rule",
    "Parameter names are not a reliable guide (a LayerNorm need not "
    "be called 'ln'): decide from the module that owns each tensor "
    "(isinstance(module, nn.Linear) and the name is 'weight')",
)


def _rule(decayed_kinds: set, wrongly_decayed, wrongly_spared) -> tuple[str, str]:
    """The rule the wrong groups point at, by the kinds wrongly decayed."""
    if len(decayed_kinds) >= 2 or (wrongly_decayed and wrongly_spared):
        return NAME_RULE
    if decayed_kinds == {"embedding"} and not wrongly_spared:
        return EMBEDDINGS
    if "norm" in decayed_kinds:
        return NORMS
    if "bias" in decayed_kinds:
        return BIASES
    return OTHER


def _diagnose(name, known, wrongly_decayed, wrongly_spared, hidden) -> CheckResult:
    kinds = known["kinds"]
    decayed_kinds = {kinds.get(n, "?") for n in wrongly_decayed}
    detail = ""
    if wrongly_decayed:
        detail += f"decayed but should not be: {_show(wrongly_decayed)}. "
    if wrongly_spared:
        detail += f"not decayed but should be: {_show(wrongly_spared)}. "
    diagnosis, message = _rule(decayed_kinds, wrongly_decayed, wrongly_spared)
    if diagnosis == EMBEDDINGS[0] and wrongly_decayed <= set(known["tied_names"]):
        message = (
            "You decayed the tied head's weight: it is the embedding table "
            "itself (nn.Embedding and nn.Linear share it), so it counts as an "
            "embedding and is not decayed. Take the embedding tensors out of "
            "the Linear weights before deciding"
        )
    return likely_mistake(name, detail + message, diagnosis=diagnosis, hidden=hidden)
