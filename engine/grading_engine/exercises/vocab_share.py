"""vocab-share: what share of a Llama-style model one V x d matrix is.

Tying saves exactly one vocabulary matrix; whether that is worth it depends
on its share of the whole model (lesson why-large-models-untie). The total
is the embedding (and a separate head when untied), L blocks of grouped-
query attention (q and o: d x n_q·hd; k and v: d x n_kv·hd), a 3-matrix
SwiGLU MLP and two RMSNorm scales, plus the final norm. Every hidden draw
has n_kv < n_q and both a tied and an untied model, so ignoring grouped-
query attention or the tying shows.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import float_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.exercises.kit.runs import returns_float

SLUG = "vocab-share"
ENTRY_POINT = "vocab_share"
SIGNATURE = "vocab_share(V, d, n_layer, ffn, n_q, n_kv, head_size, tied) -> float"
_ARGS = ("V", "d", "n_layer", "ffn", "n_q", "n_kv", "head_size", "tied")

REL_TOL = 1e-9


def _total(
    V, d, n_layer, ffn, n_q, n_kv, head_size, tied, *, attn=None, mlp=None, norms=True
):
    if attn is None:
        attn = 2 * d * n_q * head_size + 2 * d * n_kv * head_size
    if mlp is None:
        mlp = 3 * d * ffn
    norm = 1 if norms else 0  # the RMSNorm scales: 2 per block and a final one
    return V * d * (1 if tied else 2) + n_layer * (attn + mlp + 2 * d * norm) + d * norm


def reference(V, d, n_layer, ffn, n_q, n_kv, head_size, tied) -> float:
    return V * d / _total(V, d, n_layer, ffn, n_q, n_kv, head_size, tied)


_case = partial(args_case, _ARGS)
MODELS = {  # V, d, L, ffn, n_q, n_kv, head size, tied (Hugging Face configs)
    "Llama 3.2 1B": (128256, 2048, 16, 8192, 32, 8, 64, True),
    "Llama 3.1 8B": (128256, 4096, 32, 14336, 32, 8, 128, False),
    "Llama 3.2 3B": (128256, 3072, 28, 8192, 24, 8, 128, True),
    "Llama 3.1 70B": (128256, 8192, 80, 28672, 64, 8, 128, False),
}


def _named(name: str, hidden: bool) -> dict:
    return _case(f"{name} ({'tied' if MODELS[name][7] else 'untied'})", hidden,
                 **dict(zip(_ARGS, MODELS[name], strict=True)))  # fmt: skip


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _named("Llama 3.2 1B", False),
        _named("Llama 3.1 8B", False),
        _named(rng.choice(["Llama 3.2 3B", "Llama 3.1 70B"]), True),
    ]
    for i, tied in enumerate([True, False]):
        n_kv = rng.choice([1, 2, 4, 8])
        head_size = rng.choice([64, 128])
        n_q = n_kv * rng.choice([2, 3, 4, 8])
        d = n_q * head_size
        cases.append(
            _case(
                f"random {'tied' if tied else 'untied'} model {i + 1}",
                True,
                V=rng.choice([32000, 50257, 128256, 151936]),
                d=d,
                n_layer=rng.randint(8, 96),
                ffn=256 * round(rng.uniform(2.5, 4.0) * d / 256),
                n_q=n_q,
                n_kv=n_kv,
                head_size=head_size,
                tied=tied,
            )
        )
    return cases


run_case = returns_float(_ARGS, ints=False)


def _slips(args: dict) -> list[tuple[float, str, str]]:
    V, d = args["V"], args["d"]
    right = reference(**args)
    total = _total(**args)
    n_heads_dims = args["n_q"] * args["head_size"]
    slips = [
        (
            V * d / (total - V * d * (1 if args["tied"] else 2)),
            "share-of-the-body",
            "that divides by the non-embedding parameters; the share is of "
            "the whole model, vocabulary matrices included",
        ),
        (
            V * d / _total(**args, attn=4 * d * n_heads_dims),
            "ignored-gqa",
            "that counts k and v as wide as q; with grouped-query attention "
            "k and v have n_kv heads: 2·d·n_q·hd + 2·d·n_kv·hd per block",
        ),
        (
            V * d / _total(**args, mlp=2 * d * args["ffn"]),
            "two-matrix-mlp",
            "that counts two MLP matrices; SwiGLU has three (gate, up, down), "
            "3·d·ffn per block",
        ),
        (
            V * d / _total(**args, norms=False),
            "forgot-norm-scales",
            "that leaves out the RMSNorm scales: each block has two of d "
            "numbers (before attention and before the MLP) and the final norm "
            "one more, so add 2·d per block and d",
        ),
        (
            right * 100,
            "percent-not-fraction",
            "that is a percentage; return the fraction (0.213 for 21.3%)",
        ),
    ]
    # Code that ignores the flag counts one matrix always, or two always:
    # a row each, one of them the answer on this model (the slip is named
    # only where the other one is given, and where every case agrees).
    slips += [
        (
            V * d / _total(**{**args, "tied": tied}),
            "ignored-tying",
            "a tied model stores ONE V x d matrix for the embedding and the "
            "head, an untied one two: count it once when tied, twice when not",
        )
        for tied in (True, False)
    ]
    if not args["tied"]:
        slips.append(
            (
                2 * right,
                "counted-both-matrices",
                "the question is what tying would save: ONE V x d matrix, "
                "not the embedding and the head together",
            )
        )
    return slips


check_case = float_compared(
    "share",
    rel_tol=REL_TOL,
    spec=".4f",
    float_hint="return the share as a float between 0 and 1",
)
