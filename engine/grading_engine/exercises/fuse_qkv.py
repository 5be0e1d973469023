"""fuse-qkv: build GPT-2's c_attn from three separate q, k, v projections.

The learner returns (weight, bias) with weight (3 * n_embd, n_embd) in
nn.Linear orientation and q, k, v stacked in that order, so that
F.linear(x, weight, bias).split(n_embd, dim=-1) gives back q, k and v. One
case fuses the `mini` reference model's own c_attn after cutting it in three:
the result must be that weight, bit for bit.
"""

from __future__ import annotations

import itertools
import random

import torch

from grading_engine.checks.answers import tensor_answer
from grading_engine.checks.learner_calls import capture_parts
from grading_engine.checks.result import likely_mistake
from grading_engine.checks.tensors import case_error, failed, missing_parts
from grading_engine.exercises.kit.cases import new_case, seed_cases
from grading_engine.expected import expectation
from grading_engine.reference import build_model

SLUG = "fuse-qkv"
ENTRY_POINT = "fuse_qkv"
SIGNATURE = "fuse_qkv(w_q, b_q, w_k, b_k, w_v, b_v) -> tuple[Tensor, Tensor]"

RTOL, ATOL = 0.0, 0.0  # concatenation moves numbers; it must not change them
NAMES = ("q", "k", "v")
NOT_A_PAIR = (
    "expected a pair (weight, bias), got a {kind}: return both, "
    "e.g. `return weight, bias`"
)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    cases = [
        new_case("n_embd = 6", False, d=6),
        new_case("the mini model's c_attn, cut and re-fused", False, mini=True),
        new_case("hidden: n_embd = 768", True, d=768),
    ]
    for i in range(2):
        cases.append(new_case(f"hidden {i + 1}", True, d=rng.randint(5, 40)))
    return seed_cases(cases, rng)


def inputs(case: dict) -> list[torch.Tensor]:
    """[w_q, b_q, w_k, b_k, w_v, b_v], weights (d, d) as nn.Linear stores them."""
    if case.get("mini"):
        attn = build_model("mini").transformer.h[1].attn
        d = attn.n_embd
        w = attn.c_attn.weight.detach().split(d, dim=0)
        g = torch.Generator().manual_seed(case["seed"])
        b = (torch.randn(3 * d, generator=g) * 0.1).split(d)  # init biases are 0
    else:
        d = case["d"]
        g = torch.Generator().manual_seed(case["seed"])
        w = [torch.randn(d, d, generator=g) for _ in range(3)]
        b = [torch.randn(d, generator=g) for _ in range(3)]
    return [t.contiguous() for pair in zip(w, b, strict=True) for t in pair]


def reference(args: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    w_q, b_q, w_k, b_k, w_v, b_v = args
    return torch.cat([w_q, w_k, w_v], dim=0), torch.cat([b_q, b_k, b_v], dim=0)


def run_case(fn, case: dict):
    return capture_parts(fn, inputs(case), ("weight", "bias"))


def _same(a, b) -> bool:
    return isinstance(a, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)


def _weight_slips(args) -> list[tuple[torch.Tensor, str, str]]:
    """The fused weights of the known wrong layouts, in the order they are
    tried, with their diagnoses and hints."""
    ws = dict(zip(NAMES, args[0::2], strict=True))
    d = args[0].shape[0]
    slips = [
        (
            torch.cat(list(ws.values()), dim=0).T,
            "conv1d-layout",
            "your weight is the transpose of the answer, (n_embd, 3 * n_embd): "
            "that is the Conv1D layout of OpenAI's and Hugging Face's GPT-2 "
            "checkpoints. nn.Linear stores (out, in), so concatenate the three "
            "(d, d) weights along dim 0 without transposing",
        ),
        (
            torch.cat(list(ws.values()), dim=1),
            "cat-wrong-dim",
            "you concatenated along dim 1, the input axis: each weight is "
            "(out, in) = (n_embd, n_embd), and q, k, v are three groups of "
            "OUTPUTS, so torch.cat([w_q, w_k, w_v], dim=0) gives (3 * n_embd, "
            "n_embd)",
        ),
        (
            torch.cat([w.T for w in ws.values()], dim=0),
            "qkv-blocks-transposed",
            "each of your three blocks is its weight transposed (w.T, (in, "
            "out)): the separate weights are already in nn.Linear's (out, in) "
            "orientation, the same as c_attn's rows, so concatenate them as "
            "they are, without .T",
        ),
        (
            torch.stack(list(ws.values()), dim=1).reshape(3 * d, d),
            "interleaved-rows",
            "your rows alternate q, k, v (torch.stack(..., dim=1) then a "
            "reshape): c_attn's output is split into three contiguous blocks, "
            "so the first n_embd rows must all be w_q; use torch.cat(..., dim=0)",
        ),
    ]
    slips += _repeated_blocks(ws, "weight")
    for order in itertools.permutations(NAMES):
        if order != NAMES:
            slips.append(
                (
                    torch.cat([ws[n] for n in order], dim=0),
                    "qkv-order",
                    f"your blocks are in the order {', '.join(order)}: GPT-2's "
                    "c_attn output is split as q, k, v (`q, k, v = "
                    "c_attn(x).split(n_embd, dim=2)`), so stack them in that "
                    "order",
                )
            )
    return slips


def _repeated_blocks(parts: dict, key: str) -> list[tuple[torch.Tensor, str, str]]:
    """The fusions with one block replaced by a copy of another, so one of
    q, k, v appears twice and one never: a copy-paste slip such as
    cat([b_q, b_k, b_k]). Six of them, each a full copy of the answer."""
    p = key[0]  # w_q or b_q
    slips = []
    for slot, wrong in itertools.permutations(range(3), 2):
        used = list(NAMES)
        used[slot] = NAMES[wrong]
        slips.append(
            (
                torch.cat([parts[n] for n in used], dim=0),
                "qkv-block-repeated",
                f"your fused {key} is cat([{', '.join(f'{p}_{n}' for n in used)}]): "
                f"{p}_{NAMES[wrong]} is in twice and {p}_{NAMES[slot]} never "
                "appears (a copy-paste slip?). The three blocks must be q, k "
                "and v, each once, in that order",
            )
        )
    return slips


def _bias_slips(args) -> list[tuple[torch.Tensor, str, str]]:
    b_q, b_k, b_v = args[1::2]
    return [
        (
            b_q + b_k + b_v,
            "qkv-bias-summed",
            "your bias is b_q + b_k + b_v, (n_embd,): the fused layer has "
            "3 * n_embd outputs and each needs its own bias, so concatenate "
            "them like the weights, torch.cat([b_q, b_k, b_v])",
        ),
        *_repeated_blocks(dict(zip(NAMES, args[1::2], strict=True)), "bias"),
    ]


@expectation
def expected_parts(case: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The fused weight and bias (shipped for the visible cases)."""
    return reference(inputs(case))


@expectation
def known_slips(case: dict) -> dict:
    """What the known wrong fusions give (shipped for the visible cases)."""
    args = inputs(case)
    return {"weight": _weight_slips(args), "bias": _bias_slips(args)}


def _diagnose_weight(got, slips) -> tuple[str, str] | None:
    """Name a wrong layout of the fused weight, if it is a known one."""
    for value, diagnosis, hint in slips:
        if _same(got, value):
            return diagnosis, hint
    return None


def _diagnose_bias(got, slips) -> tuple[str, str] | None:
    """Name a wrong fused bias, if it is a known one."""
    for value, diagnosis, hint in slips:
        if (
            isinstance(got, torch.Tensor)
            and got.shape == value.shape
            and got.dtype == value.dtype
            and torch.allclose(got, value, rtol=1e-5, atol=1e-6)
        ):
            return diagnosis, hint
    return None


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data):
        return raised
    if missing := missing_parts(name, data, 2, NOT_A_PAIR, hidden=hidden):
        return missing
    want_w, want_b = expected_parts(case)
    results = []
    for key, want, axes in (
        ("weight", want_w, ("3*n_embd", "n_embd")),
        ("bias", want_b, ("3*n_embd",)),
    ):
        found = tensor_answer(
            f"{name}: {key}",
            data,
            tensors,
            want,
            key=key,
            check_inputs=key == "weight",
            axes=axes,
            sizes={"n_embd": want_w.shape[1]},
            rtol=RTOL,
            atol=ATOL,
            what=f"the fused {key}",
            hidden=hidden,
        )
        results += found
        got = tensors.get(key)
        if failed(found) and isinstance(got, torch.Tensor):
            diagnose = _diagnose_weight if key == "weight" else _diagnose_bias
            if known := diagnose(got, known_slips(case)[key]):
                diagnosis, message = known
                results.append(
                    likely_mistake(name, message, diagnosis=diagnosis, hidden=hidden)
                )
    return results
