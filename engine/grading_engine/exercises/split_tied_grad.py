"""split-tied-grad: the two contributions that add up in a tied weight's .grad.

A tied GPT-2 uses one (V, d) Parameter twice: as the embedding table and as
the head. Its .grad after backward is the sum of both uses. The learner
returns the two parts separately, (embedding_part, head_part), for the mean
next-token cross-entropy. The parent recomputes them on an untied copy with
the same values, where autograd keeps the two uses apart.
"""

from __future__ import annotations

import random

import torch
from torch.nn import functional as F

from grading_engine.checks.answers import tensor_answer
from grading_engine.checks.fingerprints import Variant, computed, shipped_variants
from grading_engine.checks.learner_calls import capture_parts
from grading_engine.checks.result import CheckResult
from grading_engine.checks.tensors import case_error, missing_parts
from grading_engine.expected import expectation, per_case
from grading_engine.reference import build_model, get_config

SLUG = "split-tied-grad"
ENTRY_POINT = "split_tied_grad"
SIGNATURE = "split_tied_grad(model, idx, targets) -> tuple[Tensor, Tensor]"

RTOL, ATOL = 1e-4, 1e-6
PARTS = ("embedding_part", "head_part")
NOT_A_PAIR = (
    "returned a {kind}: return a tuple of two tensors, (embedding_part, head_part)"
)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    specs = [
        ("tiny, 2 x 6", "tiny", False, 2, 6),
        ("mini, 3 x 9", "mini", False, 3, 9),
        ("hidden tiny", "tiny", True, rng.randint(1, 3), rng.randint(3, 16)),
        ("hidden mini", "mini", True, rng.randint(2, 4), rng.randint(5, 32)),
    ]
    cases = []
    for name, config, hidden, b, t in specs:
        V = get_config(config).vocab_size
        # A visible case draws from its position, so it is the same every attempt.
        draw = rng if hidden else random.Random(len(cases))
        cases.append(
            {
                "name": name,
                "hidden": hidden,
                "config": config,
                "seed": rng.randrange(2**31) if hidden else len(cases),
                "idx": [[draw.randrange(V) for _ in range(t)] for _ in range(b)],
                "targets": [[draw.randrange(V) for _ in range(t)] for _ in range(b)],
            }
        )
    return cases


def _tensors(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor(case["idx"]), torch.tensor(case["targets"])


# -- child --------------------------------------------------------------------


def run_case(fn, case: dict):
    model = build_model(case["config"], seed=case["seed"])  # tied
    return capture_parts(fn, (model, *_tensors(case)), PARTS)


# -- parent -------------------------------------------------------------------


def _untied(case: dict):
    """The case's model untied: the same values in two tensors, so a
    backward keeps the two uses' gradients apart."""
    tied = build_model(case["config"], seed=case["seed"])
    untied = build_model(case["config"], seed=case["seed"], tied=False)
    untied.load_state_dict(tied.state_dict())
    return untied


@per_case
def reference_parts(case: dict) -> tuple[torch.Tensor, ...]:
    """(embedding part, head part, h, probabilities, the stream before
    ln_f) on an untied copy."""
    untied = _untied(case)
    idx, targets = _tensors(case)
    trace = untied.forward_trace(idx)
    F.cross_entropy(trace["logits"].flatten(0, 1), targets.flatten()).backward()
    h = trace["ln_f"].detach().flatten(0, 1)
    p = torch.softmax(trace["logits"].detach().flatten(0, 1), dim=-1)
    last_block = f"h.{untied.config.n_layer - 1}.mlp"
    return (
        untied.transformer.wte.weight.grad,
        untied.lm_head.weight.grad,
        h,
        p,
        trace[last_block].detach().flatten(0, 1),
    )


@per_case
def shifted_again_parts(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The two parts when the targets, already the next tokens, are shifted
    once more: logits[:, :-1] scored against targets[:, 1:]."""
    untied = _untied(case)
    idx, targets = _tensors(case)
    logits = untied(idx)[:, :-1]
    F.cross_entropy(logits.flatten(0, 1), targets[:, 1:].flatten()).backward()
    return untied.transformer.wte.weight.grad, untied.lm_head.weight.grad


_WHAT = {"embedding_part": "the embedding part", "head_part": "the head part"}


@expectation
def expected_parts(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The two gradient parts (shipped for the visible cases)."""
    return reference_parts(case)[:2]


@expectation(keys=lambda case: list(PARTS))
def known_mistakes(case: dict, key: str) -> list:
    """What the known mistakes give for one part (shipped likewise)."""
    return computed(_variants(key, _WHAT[key], reference_parts(case), case))


def _variants(key, what, parts, case) -> list[Variant]:
    """Known wrong answers for one of the two parts."""
    emb, head, h, p, before_ln_f = parts
    expected, other = (emb, head) if key == "embedding_part" else (head, emb)
    targets = _tensors(case)[1].flatten()
    n = targets.numel()
    variants = [
        Variant(
            "parts-swapped",
            lambda: other,
            f"{what} you returned is the OTHER use's gradient: the embedding "
            "part comes from the lookup (only rows of tokens in idx), the "
            "head part from the output projection (every row)",
        ),
        Variant(
            "not-split",
            lambda: emb + head,
            f"{what} you returned is the whole tied gradient: with one shared "
            "Parameter, .grad already holds the SUM of both uses; untie for "
            "one backward (a separate head tensor with the same values) to "
            "see each part",
        ),
        Variant(
            "summed-not-averaged",
            lambda: expected * n,
            f"{what} is {n} times too large: the loss is the MEAN over the "
            f"{n} positions (F.cross_entropy's default), not the sum",
        ),
    ]
    variants.append(
        Variant(
            "targets-shifted-again",
            lambda: shifted_again_parts(case)[PARTS.index(key)],
            f"{what} matches a loss of logits[:, :-1] against targets[:, 1:]: "
            "the targets are already the next tokens (targets[i, j] follows "
            "idx[i, j]), so score every position's logits against "
            "targets[i, j] as given, without shifting again",
        )
    )
    onehot = F.one_hot(targets, p.shape[-1]).to(p.dtype)
    # The head part by hand from the stream before ln_f (the head reads
    # ln_f's output), and the tied total minus it as the embedding part.
    head_before = (p - onehot).T @ before_ln_f / n
    before = head_before if key == "head_part" else emb + head - head_before
    variants.append(
        Variant(
            "head-part-before-ln-f",
            lambda: before,
            f"{what} matches a head part built from the hidden state BEFORE "
            "ln_f: the head multiplies ln_f's output, so its gradient is "
            "(softmax(logits) - onehot(targets))^T h / N with h = ln_f(x), "
            "the final LayerNorm applied",
        )
    )
    if key == "head_part":
        variants += [
            Variant(
                "missing-softmax-term",
                lambda: -(onehot.T @ h) / n,
                "your head part only touches the target rows: the head's "
                "gradient is (softmax(logits) - onehot(targets))^T h / N, "
                "so EVERY row gets p_i * h, pushing non-targets away",
            ),
            Variant(
                "missing-target-term",
                lambda: (p.T @ h) / n,
                "your head part lacks the -onehot(targets) term: the "
                "gradient is (softmax(logits) - onehot(targets))^T h / N",
            ),
        ]
    return variants


def check_case(case: dict, data: dict, tensors: dict) -> list[CheckResult]:
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data):
        return raised
    if missing := missing_parts(f"{name}: a pair", data, 2, NOT_A_PAIR, hidden=hidden):
        return missing
    parts = expected_parts(case)
    results: list[CheckResult] = []
    for key, expected in zip(PARTS, parts, strict=True):
        what = _WHAT[key]
        results += tensor_answer(
            f"{name}: {what}",
            data,
            tensors,
            expected,
            key=key,
            check_inputs=key == "embedding_part",
            variants=lambda key=key: shipped_variants(known_mistakes(case, key)),
            mistake_name=name,
            axes=("vocab", "n_embd"),
            sizes={},
            rtol=RTOL,
            atol=ATOL,
            what=what,
            hidden=hidden,
        )
    return results
