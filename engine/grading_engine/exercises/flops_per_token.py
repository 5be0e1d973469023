"""flops-per-token: matmul FLOPs per token of a GPT-2, forward or training.

Forward: 2 FLOPs per weight of the block matrices and the (tied) head, plus
4·L·T·d for attention scores and the weighted sum of values; training is 3x
(backward computes input and weight gradients). This is exactly what
torch.utils.flop_counter measures on the reference model.
"""

from __future__ import annotations

import random
from functools import partial

from grading_engine.checks.compared import int_compared
from grading_engine.exercises.kit.args import args_case
from grading_engine.harness.capture import capture_int
from grading_engine.reference import gpt2_parameter_count

SLUG = "flops-per-token"
ENTRY_POINT = "flops_per_token"
SIGNATURE = (
    "flops_per_token(vocab_size, n_embd, n_layer, seq_len, training=False) -> int"
)
_ARGS = ("vocab_size", "n_embd", "n_layer", "seq_len", "training")


def _forward_parts(vocab_size, n_embd, n_layer, seq_len) -> tuple[int, int]:
    d, L = n_embd, n_layer
    return 2 * (12 * L * d * d + vocab_size * d), 4 * L * seq_len * d


def reference(vocab_size, n_embd, n_layer, seq_len, training=False) -> int:
    weights, attention = _forward_parts(vocab_size, n_embd, n_layer, seq_len)
    return (weights + attention) * (3 if training else 1)


_case = partial(args_case, _ARGS)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        _case("gpt2 forward, 128 tokens", False, "gpt2", seq_len=128, training=False),
        _case("gpt2 training, 1,024 tokens", False, "gpt2", seq_len=1024,
              training=True),
        _case("gpt2-xl forward, 1,024 tokens", True, "gpt2-xl", seq_len=1024,
              training=False),
        _case("tiny training, 16 tokens", True, "tiny", seq_len=16, training=True),
    ]  # fmt: skip
    for i in range(4):
        cases.append(
            _case(
                f"random model {i + 1}",
                True,
                vocab_size=rng.randint(1000, 200_000),
                n_embd=64 * rng.randint(2, 64),
                n_layer=rng.randint(2, 80),
                seq_len=rng.choice([rng.randint(2, 512), 2 ** rng.randint(9, 15)]),
                training=i % 2 == 0,
            )
        )
    return cases


def run_case(fn, case: dict):
    a = case["args"]
    result = fn(a["vocab_size"], a["n_embd"], a["n_layer"], a["seq_len"],
                training=a["training"])  # fmt: skip
    return {"result": capture_int(result)}, {}


def _slips(args: dict) -> list[tuple[int, str, str]]:
    a = dict(args)
    training = a.pop("training")
    factor = 3 if training else 1
    weights, attention = _forward_parts(**a)
    d, L, V, T = a["n_embd"], a["n_layer"], a["vocab_size"], a["seq_len"]
    n = gpt2_parameter_count(V, T, d, L)
    slips = [
        (
            weights * factor,
            "forgot-attention",
            "attention multiplies activations by activations: q·k scores and "
            "the weighted sum of v add 4·L·T·d FLOPs per token",
        ),
        (
            (weights - 2 * V * d + attention) * factor,
            "forgot-lm-head",
            "the output head multiplies by all V rows of the (tied) embedding: "
            "2·V·d FLOPs per token, tied or not",
        ),
        *(
            (
                (weights + half) * factor,
                "attention-half",
                "that is half the attention FLOPs: the scores q·kᵀ AND the "
                "weighted sum of the values each cost 2·T·d per token per "
                "layer, over the full t x t product (the causal mask is "
                "applied after it is computed, so it saves nothing)",
            )
            # Half the product, or the product over half the positions
            # (T // 2): one mistake, apart where T is odd.
            for half in sorted({attention // 2, 4 * L * (T // 2) * d})
        ),
        (
            (weights - 4 * L * d * d + attention) * factor,
            "c-attn-as-square",
            "that counts c_attn as a d -> d matrix; it projects each token to "
            "q, k and v at once, d -> 3d, so a block's four matrices hold "
            "3d² + d² + 4d² + 4d² = 12·d² weights, not 10·d²",
        ),
        (
            (weights - 8 * L * d * d + attention) * factor,
            "forgot-mlp-matrix",
            "that leaves one of the MLP's two 4·d² matrices out of each block "
            "(c_fc d -> 4d or mlp.c_proj 4d -> d): a block's four matrices "
            "hold 3d² + d² + 4d² + 4d² = 12·d² weights",
        ),
        (
            (weights + 2 * V * d + attention) * factor,
            "counted-embedding-lookup",
            "the embedding lookup is indexing, not a matmul: count the V·d "
            "table once, for the output head",
        ),
        (
            (weights + attention) // 2 * factor,
            "counted-macs",
            "a multiply-add is 2 FLOPs, not 1",
        ),
        (
            (2 * n + attention) * factor,
            "counted-all-parameters",
            "2N counts wpe, biases and LayerNorms, which do no matmul; count "
            "the block matrices 12·L·d² and the head V·d",
        ),
    ]
    if training:
        slips += [
            (
                weights + attention,
                "forgot-backward",
                "training runs backward too: twice the forward FLOPs (input and "
                "weight gradients), 3x in total",
            ),
            (
                4 * (weights + attention),
                "counted-recompute",
                "4x the forward (8N) adds a second forward pass, as activation "
                "recomputation runs: those are hardware FLOPs, not the model's. "
                "Training is forward + backward, 3x the forward (6N)",
            ),
            (
                2 * (weights + attention),
                "backward-same-as-forward",
                "backward does two matmuls per forward matmul (dL/dx and dL/dW), "
                "so training is 3x the forward, not 2x",
            ),
        ]
    return slips


check_case = int_compared("FLOPs per token")
