"""activation-bytes: what a GPT-2 forward pass saves for backward, in fp32.

Per block, per token, autograd keeps 16·d + 4 floats (the inputs of ln_1,
c_attn, c_proj, ln_2, c_fc, q/k/v, the GELU's input and output, and the
LayerNorms' mean and 1/std), plus the softmax output, n_head·t floats per
token (b·n_head·t² in all: the quadratic part), plus the causal mask, one
byte per (t, t) entry, shared by the batch (lesson activation-memory):

    n_layer · (b·t·(64·d + 16) + 4·b·n_head·t² + t²) bytes.

Every hidden draw has b > 1 (so a mask counted per sequence, or scores
counted for one sequence, show) and
several layers and heads; the slips are told apart by the term they drop
or change, and a draw where two of them give one number is drawn again.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import int_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_int

SLUG = "activation-bytes"
ENTRY_POINT = "activation_bytes"
SIGNATURE = "activation_bytes(b, t, n_embd, n_head, n_layer) -> int"
_ARGS = ("b", "t", "n_embd", "n_head", "n_layer")


def _terms(b, t, n_embd, n_head, n_layer) -> tuple[int, int, int]:
    """(per-token floats' bytes, scores' bytes, mask bytes) of one block."""
    return b * t * (64 * n_embd + 16), 4 * b * n_head * t * t, t * t


def reference(b, t, n_embd, n_head, n_layer) -> int:
    return n_layer * sum(_terms(b, t, n_embd, n_head, n_layer))


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case("GPT-2 small, one 1,024-token sequence", False, config="gpt2",
              b=1, t=1024, n_layer=12),
        _case("GPT-2 small, one 128-token sequence", False, config="gpt2",
              b=1, t=128, n_layer=12),
        _case("GPT-2 small, a batch of 8 x 1,024", True, config="gpt2",
              b=8, t=1024, n_layer=12),
    ]  # fmt: skip
    for i in range(3):
        args = _draw(rng)
        while not _slips_apart(args):  # one number, two slips: draw again
            args = _draw(rng)
        cases.append(_case(f"random model {i + 1}", True, **args))
    return cases


def _draw(rng: random.Random) -> dict:
    n_head = rng.choice([2, 4, 8, 12, 16, 25])
    return {
        # b == n_head would make one head's scores and one sequence's
        # scores the same number: two slips, one value.
        "b": rng.choice([b for b in range(2, 33) if b != n_head]),
        "t": rng.choice([64, 256, 512, 2048]) + rng.randint(0, 63),
        "n_embd": n_head * rng.choice([32, 64, 80, 128]),
        "n_head": n_head,
        "n_layer": rng.randint(2, 48),
    }


def _slips_apart(args: dict) -> bool:
    """No two slips give one number here (b == 4: a 4-byte mask and a mask
    per sequence both add 3·t² per block), so each can be named."""
    by_value: dict[int, set[str]] = {}
    for value, name, _ in _slips(args):
        if value is None:
            continue
        by_value.setdefault(value, set()).add(name)
    return all(len(names) == 1 for names in by_value.values())


run_case = returns_int(_ARGS)


def _slips(args: dict) -> list[tuple[int, str, str]]:
    b, t, d, h, n_layer = (args[k] for k in _ARGS)
    linear, scores, mask = _terms(b, t, d, h, n_layer)
    return [
        (
            n_layer * (linear + mask),
            "forgot-attention-scores",
            "that leaves out the softmax output each block saves, "
            "b·n_head·t² floats: the only term quadratic in t, and at long "
            "context the biggest one",
        ),
        (
            n_layer * (linear + scores // h + mask),
            "scores-one-head",
            "that counts one head's (t, t) attention weights per block; every "
            "one of the n_head heads saves its own, b·n_head·t² floats",
        ),
        (
            n_layer * (linear + scores // b + mask),
            "scores-forgot-batch",
            "that counts the attention weights of one sequence per block; each "
            "of the b sequences has its own softmax output, b·n_head·t² floats "
            "(only the causal mask is shared by the batch)",
        ),
        (
            n_layer * (linear + scores + b * mask),
            "mask-per-sequence",
            "that counts the causal mask once per sequence; it is one (t, t) "
            "bool buffer, 1 byte per entry, shared by the whole batch",
        ),
        (
            n_layer * (linear // 4 + scores // 4 + mask),
            "counted-elements",
            "that counts the saved floats, not their bytes: each fp32 "
            "activation takes 4 bytes (the bool mask 1)",
        ),
        (
            n_layer * (b * t * 64 * d + scores + mask),
            "forgot-layernorm-stats",
            "that leaves out the LayerNorms' saved mean and 1/std, 2 floats "
            "per token for each of the 2 LayerNorms: 64·d + 16 bytes per token",
        ),
        (
            n_layer * (linear + scores + 4 * mask),
            "mask-counted-as-float",
            "that counts the causal mask at 4 bytes per entry, like the fp32 "
            "activations; it is a bool tensor, 1 byte per (t, t) entry",
        ),
        (
            n_layer * (linear + scores) + mask if n_layer > 1 else None,
            "mask-once-per-model",
            "that counts the causal mask once for the whole model; the table "
            "counts it per block, t² bytes in each of the n_layer blocks, like "
            "every other saved tensor",
        ),
        (
            linear + scores + mask,
            "forgot-layers",
            "that is one block's activations; every one of the n_layer blocks "
            "saves its own until backward reaches it",
        ),
    ]


check_case = int_compared("bytes")
