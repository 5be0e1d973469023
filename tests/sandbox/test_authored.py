"""Authored exercises (issue 46): a declaration graded in the real sandbox.

The reference and the known mistakes are the author's code, run as sandbox
jobs of their own; the learner's output is judged against the reference's by
the same judges as a built-in exercise's, a wrong answer named by the
mistake it matches, and `course check` gets the same verdict from the
shipped values of the visible cases.
"""

from __future__ import annotations

import copy

import pytest
from grading_engine import authored, expected
from grading_engine.authored import DeclarationError, parse
from grading_engine.grading import grade

ENTRY = "apply_rotary"
DECLARATION = {
    "inputs": [
        {"name": "q", "tensor": [1, 2, "t", "d"]},
        {"name": "k", "tensor": [1, 2, "t", "d"]},
        {"name": "base", "float": 10000.0},
    ],
    "cases": [
        {"name": "t=4, d=8", "sizes": {"t": 4, "d": 8}},
        {
            "name": "hidden 1",
            "hidden": True,
            "sizes": {"t": {"between": [2, 12]}, "d": {"one_of": [8, 16]}},
        },
    ],
    "outputs": [
        {"name": "q_rot", "axes": ["batch", "head", "time", "head_size"]},
        {"name": "k_rot", "axes": ["batch", "head", "time", "head_size"]},
    ],
}
REFERENCE = """\
import torch


def rotate(x, base):
    t, d = x.shape[-2], x.shape[-1]
    inverse = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(t, dtype=torch.float64)[:, None] * inverse[None, :]
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), -1).flatten(-2)


def apply_rotary(q, k, base):
    return rotate(q, base), rotate(k, base)
"""
SIGN = REFERENCE.replace("even * sin + odd * cos", "even * sin - odd * cos")
NO_POSITION = REFERENCE.replace("torch.arange(t, dtype", "torch.zeros(t, dtype")
MISTAKES = [
    {"diagnosis": "rope-sign", "message": "rotate by +angle", "code": SIGN},
    {"diagnosis": "rope-no-position", "message": "each position", "code": NO_POSITION},
]


def declared(**changes) -> authored.Declaration:
    body = copy.deepcopy(DECLARATION)
    body.update(changes)
    return parse(body, entry_point=ENTRY, reference=REFERENCE, mistakes=MISTAKES)


def graded(runner, code: str, declaration=None, *, entry_point=ENTRY, **options):
    return grade(
        harness="authored",
        code=code,
        entry_point=entry_point,
        runner=runner,
        declaration=declaration or declared(),
        timeout=30,
        **options,
    )


def failed(verdict) -> list:
    return [check for check in verdict.checks if not check.passed]


def test_the_reference_passes_and_each_mistake_is_named(pool):
    assert graded(pool, REFERENCE).status == "passed"
    # Another idiom of the same rotation (complex numbers) passes too.
    other = """\
import torch

def apply_rotary(q, k, base):
    d, t = q.shape[-1], q.shape[-2]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    turn = torch.polar(torch.ones(t, d // 2, dtype=torch.float64),
                       torch.arange(t, dtype=torch.float64)[:, None] * freq)
    def rot(x):
        pairs = x.double().reshape(*x.shape[:-1], -1, 2).contiguous()
        pairs = torch.view_as_complex(pairs)
        return torch.view_as_real(pairs * turn).flatten(-2).float()
    return rot(q), rot(k)
"""
    assert graded(pool, other).status == "passed"
    for mistake in MISTAKES:
        verdict = graded(pool, mistake["code"])
        assert verdict.status == "failed"
        named = {check.diagnosis for check in failed(verdict) if check.diagnosis}
        assert named == {mistake["diagnosis"]}, [c.message for c in failed(verdict)]
        assert mistake["message"] in " ".join(c.message for c in failed(verdict))


def test_a_learner_gets_the_usual_checks_of_type_shape_and_inputs(pool):
    one = graded(pool, "def apply_rotary(q, k, base):\n    return q + 0\n")
    assert "return a tuple of 2 tensors (q_rot, k_rot)" in failed(one)[0].message
    in_place = REFERENCE.replace(
        "    return rotate(q, base), rotate(k, base)",
        "    q.mul_(1.0)\n    return rotate(q, base), rotate(k, base)",
    )
    verdict = graded(pool, in_place)
    assert verdict.status == "failed"
    assert any("`q` in place" in c.message for c in failed(verdict))
    swapped = REFERENCE.replace(
        "return rotate(q, base), rotate(k, base)",
        "return rotate(q, base).transpose(-1, -2), rotate(k, base)",
    )
    shape = [c for c in failed(graded(pool, swapped)) if c.name.endswith("shape")]
    assert "the time and head-size axes are swapped" in shape[0].message
    assert shape[0].diagnosis == "swapped-axes"


def test_a_reference_that_raises_on_a_case_is_the_exercises_error(pool):
    raising = REFERENCE.replace(
        "def apply_rotary(q, k, base):\n",
        "def apply_rotary(q, k, base):\n    if q.shape[-2] > 3:\n"
        "        raise ValueError('too long')\n",
    )
    broken = parse(DECLARATION, entry_point=ENTRY, reference=raising, mistakes=MISTAKES)
    verdict = graded(pool, REFERENCE, declaration=broken)
    assert verdict.status == "error"
    [check] = verdict.checks
    assert check.name == "exercise"
    assert "case 't=4, d=8': ValueError: too long" in check.message
    one_output = REFERENCE.replace(
        "return rotate(q, base), rotate(k, base)", "return rotate(q, base)"
    )
    broken = parse(
        DECLARATION, entry_point=ENTRY, reference=one_output, mistakes=MISTAKES
    )
    [check] = graded(pool, REFERENCE, declaration=broken).checks
    assert "returned no tensor for q_rot, k_rot" in check.message


def test_course_check_judges_the_visible_cases_from_shipped_values(pool):
    declaration = declared()
    visible = [c for c in declaration.draw_cases(1) if not c["hidden"]]
    module = authored.harness_for(declaration, visible, _runs_on(pool))
    blob = expected.encode(
        harness="authored",
        engine="test",
        cases=visible,
        expected=expected.compute(module, visible),
    )
    bundle = expected.decode(blob)
    for code, status in ((REFERENCE, "passed"), (SIGN, "failed")):
        server = graded(pool, code, visible_only=True, seed=1)
        # The learner's machine: no reference, no mistakes, the same verdict.
        hollow = parse(
            DECLARATION, entry_point=ENTRY, reference="def apply_rotary(): ...\n"
        )
        local = graded(
            pool, code, declaration=hollow, cases=bundle.cases, expected=bundle
        )
        assert local.status == server.status == status
        assert [c.to_dict() for c in local.checks] == [
            c.to_dict() for c in server.checks
        ]


def _runs_on(runner):
    from grading_engine.reference.tokenizer import default_cache_dir

    def run(job):
        job = {**job, "tiktoken_cache_dir": str(default_cache_dir())}
        return runner.run(job, timeout=30)

    return run


def test_visible_cases_are_the_same_for_every_seed_and_hidden_ones_are_drawn():
    declaration = declared()
    one, two = declaration.draw_cases(1), declaration.draw_cases(2)
    assert [c for c in one if not c["hidden"]] == [c for c in two if not c["hidden"]]
    draws = {str(c["sizes"]) + str(c["seed"]) for s in range(20)
             for c in declaration.draw_cases(s) if c["hidden"]}  # fmt: skip
    assert len(draws) > 10


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"reference": "def apply_rotary(q, k, base)\n    return q, k\n"},
         "solution", "line 1"),
        ({"reference": "def rotate(q, k, base):\n    return q, k\n"},
         "solution", "defines no function apply_rotary()"),
        ({"inputs": [{"name": "q", "tensor": [1, "n"]}]},
         "cases[0].sizes", "gives no size 'n'"),
        ({"inputs": [{"name": "q", "tensor": [1024, 1024, "t"]}]},
         "cases[0]", "MB of inputs"),
        ({"cases": [{"name": "a", "sizes": {"t": {"between": [1, 2]}, "d": 2}}]},
         "cases[0].sizes.t", "a visible case has fixed sizes"),
        ({"cases": [{"name": "a", "hidden": True, "sizes": {"t": 1, "d": 2}}]},
         "cases", "at least one visible case"),
        ({"outputs": [{"name": "q_rot", "exact": True, "rtol": 0.1}]},
         "outputs[0].exact", "no rtol or atol"),
        ({"inputs": [{"name": "ids", "tensor": [4], "dtype": "int64"}]},
         "inputs[0].range", "[low, high)"),
        ({"inputs": [{"name": "q", "tensor": [2], "dtype": "complex64"}]},
         "inputs[0].dtype", "must be one of"),
        ({"mistakes": [{"diagnosis": "Not A Slug", "code": REFERENCE}]},
         "wrong_solutions[0].diagnosis", "diagnosis slug"),
    ],
)  # fmt: skip
def test_a_bad_declaration_names_its_field(change, field, words):
    body = copy.deepcopy(DECLARATION)
    reference = change.pop("reference", REFERENCE)
    mistakes = change.pop("mistakes", MISTAKES)
    body.update(change)
    with pytest.raises(DeclarationError) as raised:
        parse(body, entry_point=ENTRY, reference=reference, mistakes=mistakes)
    assert raised.value.field == field
    assert words in raised.value.message


# -- inputs from the GPT-2 reference or the author's generator; gradients and
# -- parameter counts compared ---------------------------------------------------

MLP_DECLARATION = {
    "inputs": [
        {"name": "mlp", "gpt2": "mlp", "config": {"n_embd": 16}},
        {"name": "x", "tensor": [2, "t", 16]},
    ],
    "cases": [
        {"name": "t=3", "sizes": {"t": 3}},
        {"name": "hidden", "hidden": True, "sizes": {"t": {"between": [1, 8]}}},
    ],
    "outputs": [
        {"name": "y", "axes": ["batch", "time", "channel"]},
        {"name": "dx", "gradient_of": "x", "axes": ["batch", "time", "channel"]},
    ],
}
MLP_REFERENCE = """\
import torch.nn.functional as F


def mlp_forward(mlp, x):
    return mlp.c_proj(F.gelu(mlp.c_fc(x), approximate="tanh"))
"""
NO_GELU = MLP_REFERENCE.replace(
    'F.gelu(mlp.c_fc(x), approximate="tanh")', "mlp.c_fc(x)"
)
DETACHED = MLP_REFERENCE.replace("    return mlp", "    return mlp").replace(
    "x), approximate", "x.detach()), approximate"
)


def test_a_gpt2_layer_input_and_a_gradient_are_graded(pool):
    """The MLP of the course's GPT-2 (seeded per case) is an input; the
    gradient with respect to `x` is compared like an output, so an answer
    whose values are right but whose graph is cut fails, saying why."""
    declaration = parse(
        MLP_DECLARATION,
        entry_point="mlp_forward",
        reference=MLP_REFERENCE,
        mistakes=[{"diagnosis": "no-gelu", "message": "the GELU", "code": NO_GELU}],
    )

    def mlp_graded(code: str, **options):
        return graded(pool, code, declaration, entry_point="mlp_forward", **options)

    assert mlp_graded(MLP_REFERENCE).status == "passed"
    # The module's own forward is the same computation, and the same gradient.
    assert mlp_graded("def mlp_forward(mlp, x):\n    return mlp(x)\n").status == (
        "passed"
    )
    linear = failed(mlp_graded(NO_GELU))
    assert {c.diagnosis for c in linear if c.diagnosis} == {"no-gelu"}, [
        (c.name, c.message, c.diagnosis) for c in linear
    ]
    cut = failed(mlp_graded(DETACHED))
    assert [c.name for c in cut] == ["t=3: dx: gradient", "hidden: dx: gradient"]
    assert "no gradient reached `x`" in cut[0].message, cut[0].message
    assert ".detach()" in cut[0].message

    # `course check`: the same verdicts from the shipped values, on a machine
    # without the reference (its GPT-2 layer is rebuilt from the case seed).
    visible = [c for c in declaration.draw_cases(1) if not c["hidden"]]
    module = authored.harness_for(declaration, visible, _runs_on(pool))
    bundle = expected.decode(
        expected.encode(
            harness="authored",
            engine="test",
            cases=visible,
            expected=expected.compute(module, visible),
        )
    )
    hollow = parse(declaration.public(), entry_point="mlp_forward", reference=None)
    for code, status in ((MLP_REFERENCE, "passed"), (DETACHED, "failed")):
        server = mlp_graded(code, visible_only=True, seed=1)
        local = graded(
            pool, code, hollow, entry_point="mlp_forward",
            cases=bundle.cases, expected=bundle,
        )  # fmt: skip
        assert local.status == server.status == status
        assert [c.to_dict() for c in local.checks] == [
            c.to_dict() for c in server.checks
        ]


BLOCK_DECLARATION = {
    "inputs": [
        {"name": "config", "gpt2": "config", "config": {"n_embd": 32, "n_head": 4}},
        {"name": "x", "generated": True},
    ],
    "generator": (
        "import torch\n\n\n"
        "def make_inputs(sizes, generator):\n"
        "    return {'x': torch.randn(1, sizes['t'], 32, generator=generator)}\n"
    ),
    "cases": [{"name": "t=4", "sizes": {"t": 4}}],
    "outputs": [{"name": "block", "parameters": True}],
}
# Author code runs as a submission does, without grading_engine.reference:
# a piece of the reference reaches it as a declared input.
BLOCK_REFERENCE = """\
from torch import nn


def make_mlp(config, x):
    assert x.shape == (1, 4, 32), x.shape  # the generator's input arrived
    wide = 4 * config.n_embd
    return nn.Sequential(
        nn.Linear(config.n_embd, wide), nn.GELU(), nn.Linear(wide, config.n_embd)
    )
"""
NO_BIAS = BLOCK_REFERENCE.replace(
    "nn.Linear(config.n_embd, wide)", "nn.Linear(config.n_embd, wide, bias=False)"
)


def test_a_returned_module_is_compared_by_its_parameter_count(pool):
    declaration = parse(
        BLOCK_DECLARATION, entry_point="make_mlp", reference=BLOCK_REFERENCE
    )

    def block_graded(code: str):
        return graded(pool, code, declaration, entry_point="make_mlp")

    assert block_graded(BLOCK_REFERENCE).status == "passed"
    [wrong] = failed(block_graded(NO_BIAS))
    assert wrong.name == "t=4: block: parameter count", wrong.name
    # 128 biases fewer: 4 x 32
    assert (wrong.expected, wrong.got) == ("8352", "8224"), wrong.to_dict()
    assert "8,224 parameters (-128)" in wrong.message
    public = declaration.public()
    assert public["generator"] == BLOCK_DECLARATION["generator"]
    assert parse(public, entry_point="make_mlp", reference=None) is not None


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"outputs": [{"name": "y"}, {"name": "d", "gradient_of": "mlp"}]},
         "outputs[1].gradient_of", "must name a tensor input"),
        ({"outputs": [{"name": "d", "gradient_of": "x"}]},
         "outputs", "at least one returned output"),
        ({"outputs": [{"name": "y", "parameters": True, "rtol": 0.1}]},
         "outputs[0].parameters", "compared exactly"),
        ({"inputs": [{"name": "m", "gpt2": "block", "config": {"n_head": 3}}]},
         "inputs[0].config", "multiple of n_head"),
        ({"inputs": [{"name": "m", "gpt2": "block", "config": {"n_embd": 4096}}]},
         "inputs[0].config.n_embd", "from 1 to 1,024"),
        ({"inputs": [{"name": "m", "gpt2": "decoder"}]},
         "inputs[0].gpt2", "must be one of"),
        ({"inputs": [{"name": "m", "gpt2": "model",
                      "config": {"vocab_size": 50257, "n_embd": 768, "n_head": 12}}]},
         "cases[0]", "MB of inputs"),
        ({"inputs": [{"name": "x", "generated": True}]},
         "generator", "is empty"),
        ({"generator": "def make_inputs(sizes, g):\n    return {}\n"},
         "generator", "makes nothing"),
        ({"inputs": [{"name": "x", "generated": True}],
          "generator": "def make(sizes, g):\n    return {}\n"},
         "generator", "defines no function make_inputs()"),
    ],
)  # fmt: skip
def test_a_bad_gpt2_gradient_or_generator_field_is_named(change, field, words):
    body = {**copy.deepcopy(MLP_DECLARATION), **change}
    if "inputs" in change and "gradient_of" not in str(change):
        body["outputs"] = [{"name": "y"}]
    with pytest.raises(DeclarationError) as raised:
        parse(body, entry_point="mlp_forward", reference=MLP_REFERENCE)
    assert raised.value.field == field, raised.value
    assert words in raised.value.message
