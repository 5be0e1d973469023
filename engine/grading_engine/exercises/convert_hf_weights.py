"""convert-hf-weights: Hugging Face GPT-2 state dict -> reference names/layout.

Hugging Face keeps OpenAI's Conv1D layers, whose weights are stored
(in, out); the reference uses nn.Linear, (out, in). The four projections of
each block must be transposed, everything else copied, and the attention
mask buffers of older checkpoints (attn.bias, attn.masked_bias) dropped.
The HF-shaped input is built here from a reference state dict, so no
`transformers` import is needed.
"""

from __future__ import annotations

import random
import re

import torch

from grading_engine.checks.learner_calls import call_learner, capture_tensor
from grading_engine.checks.result import CheckResult, fail
from grading_engine.checks.shapes import fmt_shape
from grading_engine.checks.tensors import case_error
from grading_engine.exercises.kit.cases import new_case
from grading_engine.exercises.kit.models import case_config, draw_width
from grading_engine.expected import expectation
from grading_engine.reference import build_model

SLUG = "convert-hf-weights"
ENTRY_POINT = "convert_hf_state_dict"
SIGNATURE = "convert_hf_state_dict(hf_state_dict) -> dict"

CONV1D = (
    "attn.c_attn.weight",
    "attn.c_proj.weight",
    "mlp.c_fc.weight",
    "mlp.c_proj.weight",
)
_KEY = re.compile(r"[A-Za-z0-9_.\-]{1,100}")  # what the wire can carry as a name
_MAX_ENTRIES = 1000
_MASK = re.compile(r"^transformer\.h\.\d+\.attn\.(bias|masked_bias)$")


def is_conv1d(key: str) -> bool:
    return key.startswith("transformer.h.") and key.endswith(CONV1D)


def make_cases(seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [
        new_case("tiny", False, config="tiny", buffers=False, seed=1),
        new_case(
            "tiny, older checkpoint with mask buffers",
            False,
            config="tiny",
            buffers=True,
            seed=2,
        ),
        new_case(
            "hidden mini", True, config="mini", buffers=True, seed=rng.randrange(2**31)
        ),
        new_case(
            "hidden random width",
            True,
            config="tiny",
            overrides=draw_width(rng, (1, 4)),
            buffers=rng.random() < 0.5,
            seed=rng.randrange(2**31),
        ),
    ]


def gpt_state_dict(case: dict) -> dict:
    """A reference GPT's state dict, every tensor redrawn so that no two
    entries are alike: the weights the Hugging Face input holds."""
    model = build_model(case_config(case), seed=case["seed"], tied=True)
    g = torch.Generator().manual_seed(case["seed"] + 1)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    return model.state_dict()


def hf_state_dict(case: dict) -> dict:
    """The same weights the way GPT2LMHeadModel stores them."""
    ref = gpt_state_dict(case)
    block = case_config(case).block_size
    hf = {}
    for key, tensor in ref.items():
        if case["buffers"] and key.endswith("attn.c_attn.weight"):
            prefix = key[: -len("c_attn.weight")]
            mask = torch.ones(block, block, dtype=torch.bool).tril()
            hf[prefix + "bias"] = mask.view(1, 1, block, block)
            hf[prefix + "masked_bias"] = torch.tensor(-1e4)
        hf[key] = tensor.t().contiguous() if is_conv1d(key) else tensor.clone()
    hf["lm_head.weight"] = hf["transformer.wte.weight"]  # tied, as HF saves it
    return hf


def run_case(fn, case: dict):
    value, error = call_learner(fn, hf_state_dict(case))
    data = {"error": error, "type": capture_tensor(value)[0]["type"]}
    tensors = {}
    if isinstance(value, dict):
        entries = {}
        for key, item in list(value.items())[:_MAX_ENTRIES]:
            if not isinstance(key, str):
                entries[repr(key)[:100]] = {"type": "non-string key"}
                continue
            info, tensor = capture_tensor(item)
            if tensor is not None and _KEY.fullmatch(key):
                tensors[key] = tensor
            entries[key[:200]] = info
        data["entries"] = entries
    return data, tensors


@expectation
def expected_state_dict(case: dict) -> dict:
    """What a correct conversion returns (shipped for the visible cases)."""
    return gpt_state_dict(case)


def check_case(case: dict, data: dict, tensors: dict):
    hidden, name = bool(case["hidden"]), case["name"]
    if raised := case_error(case, data):
        return raised
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return [
            fail(
                f"{name}: type",
                f"returned a {str(data.get('type'))[:100]}, expected a dict "
                "of name -> tensor",
                hidden=hidden,
            )
        ]
    expected = expected_state_dict(case)
    return [
        _check_keys(name, expected, set(entries), hidden),
        _check_tensors(name, expected, tensors, hidden),
    ]


def _check_keys(name, expected: dict, got: set, hidden: bool) -> CheckResult:
    missing = sorted(set(expected) - got)
    extra = sorted(got - set(expected))
    if not missing and not extra:
        return CheckResult(
            name=f"{name}: keys",
            passed=True,
            message=f"all {len(expected)} reference keys, nothing else",
            hidden=hidden,
        )
    parts, diagnosis = [], "wrong-keys"
    if missing:
        parts.append(f"missing {len(missing)} keys (e.g. {', '.join(missing[:3])})")
    if extra:
        parts.append(
            f"{len(extra)} keys the reference does not have "
            f"(e.g. {', '.join(extra[:3])})"
        )
    message = "; ".join(parts)
    if any(_MASK.match(k) for k in extra):
        diagnosis = "kept-hf-buffers"
        message += (
            ": transformer.h.{i}.attn.bias and .attn.masked_bias are the causal "
            "mask and its fill value, saved as buffers by older Hugging Face "
            "versions; the reference builds its mask itself, so drop them"
        )
    elif missing == ["lm_head.weight"] and not extra:
        diagnosis = "dropped-tied-head"
        message += (
            ": the head is tied to wte, but tying shares one tensor under "
            "both names; the reference's state_dict() lists lm_head.weight "
            "too, so copy it (load_state_dict would report it missing)"
        )
    elif any(k.endswith("attn.c_attn.bias") for k in missing):
        diagnosis = "dropped-c-attn-bias"
        message += (
            ": a filter like key.endswith('attn.bias') also matches "
            "'attn.c_attn.bias'; match the buffers exactly (ending in "
            "'.attn.bias' with the dot, or a regex)"
        )
    return fail(f"{name}: keys", message, diagnosis=diagnosis, hidden=hidden)


def _sort_tensors(expected: dict, tensors: dict) -> tuple[list, list, list]:
    """(Conv1D weights left untransposed, other weights transposed, entries
    wrong in another way) among the keys that came back."""
    not_transposed, transposed, wrong = [], [], []
    for key, want in expected.items():
        got = tensors.get(key)
        if got is None:
            continue  # reported by the key check
        if (
            got.shape == want.shape
            and got.dtype == want.dtype
            and torch.equal(got, want)
        ):
            continue
        flipped = (
            want.dim() == 2
            and got.shape == want.t().shape
            and torch.equal(got, want.t())
        )
        if flipped and is_conv1d(key):
            not_transposed.append(key)
        elif flipped:
            transposed.append(key)
        else:
            wrong.append(
                f"{key} {fmt_shape(got.shape)} {got.dtype}, "
                f"expected {fmt_shape(want.shape)} {want.dtype}"
            )
    return not_transposed, transposed, wrong


def _check_tensors(name, expected: dict, tensors: dict, hidden: bool) -> CheckResult:
    not_transposed, transposed, wrong = _sort_tensors(expected, tensors)
    if not (not_transposed or transposed or wrong):
        return CheckResult(
            name=f"{name}: tensors",
            passed=True,
            message="every tensor has the reference's shape and values",
            hidden=hidden,
        )
    if not_transposed:
        diagnosis = "conv1d-not-transposed"
        message = (
            f"{len(not_transposed)} Conv1D weights kept Hugging Face's (in, out) "
            f"layout (e.g. {not_transposed[0]}): attn.c_attn, attn.c_proj, "
            "mlp.c_fc and mlp.c_proj weights must be transposed to nn.Linear's "
            "(out, in); a square c_proj hides this from a shape check"
        )
    elif transposed:
        diagnosis = "transposed-weight"
        message = (
            f"{len(transposed)} weights were transposed that are already in the "
            f"reference's layout (e.g. {transposed[0]}): only the four Conv1D "
            "weights of each block change orientation; wte, wpe and lm_head are "
            "(rows, n_embd) in both"
        )
    else:
        diagnosis, message = None, "tensors differ from the reference"
    if wrong:
        message += f"; wrong shape, dtype or values: {'; '.join(wrong[:3])}"
    return fail(f"{name}: tensors", message, diagnosis=diagnosis, hidden=hidden)
