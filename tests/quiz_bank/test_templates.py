"""The question templates in content/quiz-templates, checked without the database.

Structure (where each template belongs, what it cites), what its variants
look like (filled prompts, misconceptions that stay wrong, enough variety),
and above all its answers: for every template a checker recomputes the key
of a few drawn variants WITHOUT quiz_bank.answers or quiz_bank.formulas, by
building the modules on the meta device, running the real torch ops,
counting FLOPs with FlopCounterMode, stepping real optimizers and
schedulers, or, where only a definition exists, solving it another way.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
import yaml
from grading_engine.quiz_bank import variants
from grading_engine.quiz_bank.numbers import within
from grading_engine.reference.model import (
    GPT,
    MLP,
    Block,
    CausalSelfAttention,
    GPTConfig,
    build_model,
)
from torch.overrides import TorchFunctionMode
from torch.utils.flop_counter import FlopCounterMode

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
TEMPLATE_FILES = sorted((CONTENT / "quiz-templates").glob("*.yaml"))
SPECS = {path.stem: yaml.safe_load(path.read_text()) for path in TEMPLATE_FILES}


def _front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text().split("---", 2)[1])


SECTIONS = {_front_matter(p)["slug"] for p in CONTENT.glob("0*-*/_section.md")}
LESSONS = {_front_matter(p)["slug"] for p in CONTENT.glob("0*-*/[0-9]*-*.md")}
DIAGNOSES = {
    d["slug"]
    for d in yaml.safe_load((CONTENT / "diagnoses.yaml").read_text())["diagnoses"]
}


# Structure ---------------------------------------------------------------------


def test_the_six_sections_and_their_lessons_are_found():
    assert len(SECTIONS) == 6 and len(LESSONS) >= 60


def test_there_are_enough_templates_in_every_section():
    assert len(SPECS) >= 30
    per_section = Counter(spec["section"] for spec in SPECS.values())
    assert set(per_section) == SECTIONS
    assert all(n >= 4 for n in per_section.values()), per_section


@pytest.mark.parametrize("path", TEMPLATE_FILES, ids=lambda p: p.stem)
def test_template_structure(path):
    spec = SPECS[path.stem]
    variants.check(spec)
    assert spec["slug"] == path.stem
    assert spec["section"] in SECTIONS
    assert spec.get("lessons"), "a template cites the lessons it tests"
    assert set(spec["lessons"]) <= LESSONS, set(spec["lessons"]) - LESSONS
    for m in spec.get("misconceptions") or []:
        assert m.get("diagnosis") in DIAGNOSES, m


# Variants ----------------------------------------------------------------------


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_variants_render_and_their_misconceptions_stay_wrong(slug):
    spec = SPECS[slug]
    absolute, relative = variants.tolerance(spec)
    for seed in range(40):
        v = variants.render(spec, seed)
        for text in (v.prompt, v.explanation):
            assert "{" not in text and "}" not in text, text
        if spec["kind"] == "numeric":
            for m, value in v.wrong:
                assert not within(Decimal(str(value)), v.answer, absolute, relative), (
                    f"seed {seed}: {m.answer} = {value} is accepted as {v.answer}"
                )
        else:
            assert len(set(v.options)) >= 3, v.options
            assert v.options[v.correct_option] == variants.show(v.answer)
            for m, value in v.wrong:
                assert variants.show(value) != variants.show(v.answer), m.answer


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_two_learners_rarely_see_the_same_numbers(slug):
    spec = SPECS[slug]
    differ = sum(
        variants.render(spec, 2 * i).prompt != variants.render(spec, 2 * i + 1).prompt
        for i in range(100)
    )
    assert differ >= 90, f"only {differ} of 100 pairs of seeds differ"


# Independent checks: helpers ---------------------------------------------------

# slug -> (function of a Variant returning the expected answer, seeds to check)
CHECKERS: dict[str, tuple[Callable[[variants.Variant], object], int]] = {}


def checker(slug: str, seeds: int = 12):
    def register(fn):
        assert slug not in CHECKERS, slug
        CHECKERS[slug] = (fn, seeds)
        return fn

    return register


DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int8": torch.int8,
}


def meta_gpt(vocab_size, block_size, n_layer, n_embd, tied=True, n_head=1) -> GPT:
    config = GPTConfig(
        vocab_size=vocab_size,
        block_size=block_size,
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        tied=tied,
    )
    with torch.device("meta"):
        return GPT(config)


def distinct(params) -> list[torch.Tensor]:
    """Parameters with a shared one once, as count_parameters sees them."""
    return list({id(p): p for p in params}.values())


def count(params) -> int:
    return sum(p.numel() for p in distinct(params))


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def meta_bytes(shape, dtype) -> int:
    return nbytes(torch.empty(shape, dtype=dtype, device="meta"))


def forward_flops(module: nn.Module, x: torch.Tensor) -> tuple[int, Counter]:
    """FlopCounterMode's total for module(x), and its count per aten op."""
    with FlopCounterMode(display=False) as counter:
        module(x)
    per_op = Counter(
        {str(op): n for op, n in counter.get_flop_counts()["Global"].items()}
    )
    return counter.get_total_flops(), per_op


def ids(b, t) -> torch.Tensor:
    return torch.zeros((b, t), dtype=torch.long, device="meta")


def gpt_shape(p) -> dict:
    return {k: p[k] for k in ("vocab_size", "block_size", "n_layer", "n_embd")}


# Independent checks: tokens and embeddings --------------------------------------


@checker("embedding-output-shape", seeds=20)
def _(v):
    p = v.params
    model = meta_gpt(p["vocab_size"], p["block_size"], 0, p["n_embd"])
    wte, wpe = model.transformer.wte, model.transformer.wpe
    pos = torch.arange(p["seq_len"], device="meta")
    return tuple((wte(ids(p["batch"], p["seq_len"])) + wpe(pos)).shape)


@checker("embedding-table-params", seeds=20)
def _(v):
    p = v.params
    model = meta_gpt(p["vocab_size"], p["block_size"], 0, p["n_embd"], tied=True)
    parts = (model.transformer.wte, model.transformer.wpe, model.lm_head)
    return count(itertools.chain.from_iterable(m.parameters() for m in parts))


@checker("embedding-share", seeds=12)
def _(v):
    model = meta_gpt(**gpt_shape(v.params), tied=True)
    tables = model.transformer.wte.weight.numel() + model.transformer.wpe.weight.numel()
    return 100 * tables / count(model.parameters())


def _padded(vocab_size: int, multiple: int) -> int:
    return next(n for n in itertools.count(vocab_size) if n % multiple == 0)


@checker("padded-vocab-size", seeds=25)
def _(v):
    rows = _padded(v.params["vocab_size"], v.params["multiple"])
    assert (
        rows >= v.params["vocab_size"]
        and rows - v.params["vocab_size"] < (v.params["multiple"])
    )
    return rows


@checker("padding-extra-params", seeds=20)
def _(v):
    p = v.params
    padded = _padded(p["vocab_size"], p["multiple"])
    sizes = [
        count(meta_gpt(vocab, 1, 0, p["n_embd"], tied=True).parameters())
        for vocab in (padded, p["vocab_size"])
    ]
    return sizes[0] - sizes[1]


@checker("one-hot-bytes", seeds=20)
def _(v):
    p = v.params
    one_hot = F.one_hot(ids(p["batch"], p["seq_len"]), p["vocab_size"])
    return nbytes(one_hot.to(DTYPES[p["dtype"]]))


# Independent checks: attention ----------------------------------------------------


@checker("attention-layer-params", seeds=25)
def _(v):
    p = v.params
    config = GPTConfig(n_head=p["n_head"], n_embd=p["n_head"] * p["head_dim"])
    with torch.device("meta"):
        return count(CausalSelfAttention(config).parameters())


@checker("head-split-shape", seeds=25)
def _(v):
    p = v.params
    b, t, nh, hs = p["batch"], p["seq_len"], p["n_head"], p["head_dim"]
    q = torch.empty((b, t, nh * hs), device="meta")
    return tuple(q.view(b, t, nh, hs).transpose(1, 2).shape)


@checker("causal-mask-visible", seeds=15)
def _(v):
    n_head, t = v.params["n_head"], v.params["seq_len"]
    # the reference's mask, one per head: which scores survive masked_fill
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    return int(causal.expand(n_head, t, t).count_nonzero())


@checker("attention-weights-bytes", seeds=20)
def _(v):
    p = v.params
    shape = (p["batch"], p["n_head"], p["seq_len"], 8)  # the head size cancels
    q = torch.empty(shape, dtype=DTYPES[p["dtype"]], device="meta")
    k = torch.empty(shape, dtype=DTYPES[p["dtype"]], device="meta")
    return nbytes(F.softmax(q @ k.transpose(-2, -1), dim=-1))


@checker("attention-flops-per-token", seeds=4)
def _(v):
    p = v.params
    t, d = p["seq_len"], p["n_embd"]
    config = GPTConfig(n_head=d // 64, n_embd=d)
    with torch.device("meta"):  # the reference's attention, in every layer
        layers = nn.Sequential(
            *(CausalSelfAttention(config) for _ in range(p["n_layer"]))
        )
    _total, per_op = forward_flops(layers, torch.empty((1, t, d), device="meta"))
    # Linear layers run as addmm / mm; q @ k^T and att @ v are the bmm calls
    assert per_op["aten.bmm"] % t == 0
    return per_op["aten.bmm"] // t


def _kv_bytes(n_layer, n_head, n_kv_head, head_dim, batch, seq_len, dtype) -> int:
    """Keys and values of every layer, from real projections on meta."""
    d, t = n_head * head_dim, seq_len
    x = torch.empty((batch, t, d), dtype=dtype, device="meta")
    total = 0
    with torch.device("meta"):
        layers = [
            (
                nn.Linear(d, n_kv_head * head_dim, dtype=dtype),
                nn.Linear(d, n_kv_head * head_dim, dtype=dtype),
            )
            for _ in range(n_layer)
        ]
    for k_proj, v_proj in layers:
        k = k_proj(x).view(batch, t, n_kv_head, head_dim).transpose(1, 2)
        v = v_proj(x).view(batch, t, n_kv_head, head_dim).transpose(1, 2)
        total += nbytes(k) + nbytes(v)
    return total


@checker("kv-cache-bytes", seeds=5)
def _(v):
    p = v.params
    d = p["n_head"] * p["head_dim"]
    dtype, b, t = DTYPES[p["dtype"]], p["batch"], p["seq_len"]
    # the reference's own split of c_attn into q, k, v, layer by layer
    config = GPTConfig(n_head=p["n_head"], n_embd=d)
    with torch.device("meta"):
        layers = [CausalSelfAttention(config).to(dtype) for _ in range(p["n_layer"])]
    x = torch.empty((b, t, d), dtype=dtype, device="meta")
    total = 0
    for attn in layers:
        _q, k, val = attn.c_attn(x).split(d, dim=2)
        k = k.view(b, t, p["n_head"], p["head_dim"]).transpose(1, 2)
        val = val.view(b, t, p["n_head"], p["head_dim"]).transpose(1, 2)
        total += nbytes(k) + nbytes(val)
    # and the same from per-head key/value projections (n_kv_head = n_head)
    assert total == _kv_bytes(
        p["n_layer"], p["n_head"], p["n_head"], p["head_dim"], b, t, dtype
    )
    return total


@checker("gqa-kv-cache-bytes", seeds=6)
def _(v):
    p = v.params
    return _kv_bytes(
        p["n_layer"],
        p["n_head"],
        p["n_kv_head"],
        p["head_dim"],
        1,
        p["seq_len"],
        DTYPES[p["dtype"]],
    )


@checker("gqa-qkv-params", seeds=20)
def _(v):
    p = v.params
    d = p["n_head"] * p["head_dim"]
    kv = p["n_kv_head"] * p["head_dim"]
    with torch.device("meta"):
        # separate projections hold what one fused c_attn holds
        q_proj, k_proj, v_proj = nn.Linear(d, d), nn.Linear(d, kv), nn.Linear(d, kv)
        x = torch.empty((1, 3, d))
        q = q_proj(x).view(1, 3, p["n_head"], p["head_dim"])
        k = k_proj(x).view(1, 3, p["n_kv_head"], p["head_dim"])
        assert q.shape[2] % k.shape[2] == 0  # query heads share key heads
    return count(itertools.chain(*(m.parameters() for m in (q_proj, k_proj, v_proj))))


# Independent checks: the block -----------------------------------------------------


@checker("block-params", seeds=20)
def _(v):
    with torch.device("meta"):
        return count(Block(GPTConfig(n_head=1, n_embd=v.params["n_embd"])).parameters())


@checker("mlp-params", seeds=20)
def _(v):
    with torch.device("meta"):
        return count(MLP(GPTConfig(n_head=1, n_embd=v.params["n_embd"])).parameters())


@checker("layernorm-params", seeds=15)
def _(v):
    model = meta_gpt(8, 4, v.params["n_layer"], v.params["n_embd"])
    norms = [m for m in model.modules() if isinstance(m, nn.LayerNorm)]
    return count(itertools.chain.from_iterable(m.parameters() for m in norms))


@checker("block-forward-flops", seeds=12)
def _(v):
    d, t = v.params["n_embd"], v.params["seq_len"]
    with torch.device("meta"):
        block = Block(GPTConfig(n_head=d // 64, n_embd=d))
    # FlopCounterMode counts the matmuls only (the bias of addmm not either)
    total, _per_op = forward_flops(block, torch.empty((1, t, d), device="meta"))
    assert total % t == 0
    return total // t


class LlamaBlock(nn.Module):
    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.attn_norm = nn.RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in "qkvo")
        self.mlp_norm = nn.RMSNorm(d)
        self.gate = nn.Linear(d, hidden, bias=False)
        self.up = nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):  # attention's mixing left out: no parameters there
        x = x + self.o(self.v(self.attn_norm(x)))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


@checker("llama-block-params", seeds=20)
def _(v):
    d, hidden = v.params["n_embd"], v.params["hidden"]
    with torch.device("meta"):
        block = LlamaBlock(d, hidden)
        assert block(torch.empty((1, 2, d))).shape == (1, 2, d)
    return count(block.parameters())


class _RecordNormal(TorchFunctionMode):
    """Records the std of every Tensor.normal_ call, by the tensor's id."""

    def __init__(self):
        super().__init__()
        self.std: dict[int, float] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.normal_:
            std = args[2] if len(args) > 2 else kwargs.get("std", 1.0)
            self.std[id(args[0])] = std
        return func(*args, **kwargs)


@checker("residual-init-std", seeds=6)
def _(v):
    n_layer = v.params["n_layer"]
    config = GPTConfig(vocab_size=8, block_size=4, n_layer=n_layer, n_head=1, n_embd=4)
    with _RecordNormal() as record:
        model = build_model(config, seed=0)  # the reference's GPT-2 init
    stds = {
        record.std[id(p)]
        for name, p in model.named_parameters()
        if name.endswith("c_proj.weight")
    }
    assert len(stds) == 1, stds  # both projections of every block alike
    other = record.std[id(model.transformer.h[0].mlp.c_fc.weight)]
    assert other == 0.02
    return stds.pop()


# Independent checks: output head and tying ------------------------------------------


@checker("logits-shape", seeds=20)
def _(v):
    p = v.params
    model = meta_gpt(p["vocab_size"], 1024, 1, p["n_embd"])
    return tuple(model(ids(p["batch"], p["seq_len"])).shape)


@checker("logits-bytes", seeds=20)
def _(v):
    p = v.params
    dtype = DTYPES[p["dtype"]]
    x = torch.empty((p["batch"], p["seq_len"], 8), dtype=dtype, device="meta")
    head = torch.empty((p["vocab_size"], 8), dtype=dtype, device="meta")
    return nbytes(F.linear(x, head))


@checker("head-flops-per-token", seeds=15)
def _(v):
    p = v.params
    t = 16
    model = meta_gpt(p["vocab_size"], t, 0, p["n_embd"], tied=True)
    total, _per_op = forward_flops(model, ids(1, t))  # lookups cost nothing
    return total // t


@checker("initial-loss", seeds=25)
def _(v):
    vocab = v.params["vocab_size"]
    logits = torch.zeros((2, vocab), dtype=torch.float64)  # every token alike
    gen = torch.Generator().manual_seed(vocab)
    targets = torch.randint(0, vocab, (2,), generator=gen)
    return F.cross_entropy(logits, targets).item()


@checker("softmax-temperature-prob", seeds=25)
def _(v):
    p = v.params
    logits = torch.tensor([p["z1"], p["z2"]], dtype=torch.float64)
    return torch.softmax(logits / p["temperature"], dim=0)[0].item()


@checker("temperature-effect", seeds=25)
def _(v):
    t_old, t_new = v.params["t_old"], v.params["t_new"]
    gen = torch.Generator().manual_seed(int(1000 * t_old + 10 * t_new))
    words = set()
    for _trial in range(3):  # random logits, not all equal
        logits = torch.randn(20, generator=gen, dtype=torch.float64) * 3
        old = torch.softmax(logits / t_old, dim=0)
        new = torch.softmax(logits / t_new, dim=0)
        top = int(old.argmax())
        assert int(new.argmax()) == top  # the order never changes
        words.add("rises" if new[top] > old[top] else "falls")
    assert len(words) == 1, words  # whatever the logits
    start = f"it {words.pop()}:"
    return next((o for o in v.options if o.startswith(start)), start)


@checker("tying-saves-share", seeds=12)
def _(v):
    model = meta_gpt(**gpt_shape(v.params), tied=False)
    return 100 * model.lm_head.weight.numel() / count(model.parameters())


# Independent checks: counting -------------------------------------------------------


@checker("gpt2-params-tied", seeds=12)
def _(v):
    model = meta_gpt(**gpt_shape(v.params), tied=True)
    assert model.lm_head.weight is model.transformer.wte.weight
    return count(model.parameters())


@checker("gpt2-params-untied", seeds=12)
def _(v):
    model = meta_gpt(**gpt_shape(v.params), tied=False)
    assert model.lm_head.weight is not model.transformer.wte.weight
    return count(model.parameters())


@checker("weight-memory-bytes", seeds=12)
def _(v):
    model = meta_gpt(**gpt_shape(v.params), tied=True)
    dtype = DTYPES[v.params["dtype"]]
    return sum(meta_bytes(p.shape, dtype) for p in distinct(model.parameters()))


def _adam_state(model: GPT) -> dict[str, int]:
    """Bytes of bf16 mixed-precision AdamW training, by kind of tensor."""
    master = distinct(model.parameters())  # fp32 master weights
    for p in master:
        p.grad = torch.zeros_like(p)
    opt = torch.optim.AdamW(master, lr=1e-3)
    opt.step()  # on meta: creates the real optimizer state, computes nothing
    moments = [
        t for state in opt.state.values() for k, t in state.items() if k != "step"
    ]
    return {
        "bf16 weights": sum(meta_bytes(p.shape, torch.bfloat16) for p in master),
        "bf16 gradients": sum(meta_bytes(p.shape, torch.bfloat16) for p in master),
        "fp32 master": sum(nbytes(p) for p in master),
        "fp32 moments": sum(nbytes(t) for t in moments),
        "bf16 moments": sum(meta_bytes(t.shape, torch.bfloat16) for t in moments),
    }


@checker("adam-training-bytes", seeds=4)
def _(v):
    state = _adam_state(meta_gpt(**gpt_shape(v.params), tied=True))
    passes = state["bf16 weights"] + state["bf16 gradients"]
    # the misconceptions are what their diagnoses say
    slips = {m.diagnosis: value for m, value in v.wrong}
    assert slips["forgot-master-weights"] == passes + state["fp32 moments"]
    assert slips["states-in-bf16"] == passes + state["bf16 moments"]
    one_moment = state["fp32 moments"] // 2  # Adam keeps two; the slip adds one
    assert slips["adam-three-buffers"] == (
        passes + state["fp32 master"] + state["fp32 moments"] + one_moment
    )
    return passes + state["fp32 master"] + state["fp32 moments"]


@checker("activation-bytes-block", seeds=10)
def _(v):
    """The lesson's measurement: every storage autograd saves, weights aside."""
    p = v.params
    d = p["n_head"] * p["head_dim"]
    with torch.device("meta"):
        block = Block(GPTConfig(n_head=p["n_head"], n_embd=d)).train()
    weights = {w.untyped_storage()._cdata for w in block.parameters()}
    saved: dict[int, int] = {}

    def pack(x):
        storage = x.untyped_storage()
        if storage._cdata not in weights:
            saved[storage._cdata] = storage.nbytes()
        return x

    x = torch.empty((p["batch"], p["seq_len"], d), device="meta", requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        block(x)
    return sum(saved.values())


@checker("forward-flops-per-token", seeds=3)
def _(v):
    p = v.params
    t, d = p["seq_len"], p["n_embd"]
    # the prompt's model: a context of seq_len positions, read in full
    model = meta_gpt(p["vocab_size"], t, p["n_layer"], d, tied=True, n_head=d // 64)
    total, per_op = forward_flops(model, ids(1, t))
    assert total % t == 0
    # the misconceptions are what their diagnoses say: the attention products
    # are the bmm calls, the bias-free head the one plain mm
    attention, head = per_op["aten.bmm"] // t, per_op["aten.mm"] // t
    assert head == 2 * model.lm_head.weight.numel()
    slips = {m.diagnosis: value for m, value in v.wrong}
    assert slips["counted-all-parameters"] == 2 * count(model.parameters())
    assert slips["forgot-lm-head"] == total // t - head
    assert slips["forgot-attention"] == total // t - attention
    assert slips["attention-half"] == total // t - attention // 2
    return total // t


@checker("kv-crossover-tokens", seeds=10)
def _(v):
    p = v.params
    model = meta_gpt(**gpt_shape(p), tied=True).to(torch.bfloat16)
    weights = sum(nbytes(w) for w in distinct(model.parameters()))

    def cache(t):  # keys and values of every layer, heads of 64
        shape = (p["n_layer"], 2, p["batch"], p["n_embd"] // 64, t, 64)
        return meta_bytes(shape, torch.bfloat16)

    low, high = 0, 1  # cache(low) < weights <= cache(high)
    while cache(high) < weights:
        low, high = high, 2 * high
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if cache(mid) < weights else (low, mid)
    return high


def _hours(n_params, tokens, gpus, peak_flops, mfu):
    """Training time from the definitions: a token costs 6N FLOPs, and the
    GPUs deliver gpus x peak x MFU of them a second."""
    tokens_per_second = gpus * peak_flops * mfu / (6 * n_params)
    seconds_per_hour = 60 * 60
    return tokens / tokens_per_second / seconds_per_hour


def test_training_time_definition_gives_the_lessons_figure():
    # lesson training-time-mfu: GPT-2 small, 10B tokens, one A100, 40% MFU
    assert round(_hours(124_439_808, 10e9, 1, 312e12, 0.40), 1) == 16.6
    assert round(_hours(124_439_808, 10e9, 8, 989e12, 0.40), 2) == 0.66


@checker("train-hours", seeds=20)
def _(v):
    p = v.params
    return _hours(
        p["n_params_m"] * 10**6,
        p["tokens_b"] * 10**9,
        p["n_gpus"],
        p["peak_tflops"] * 10**12,
        p["mfu_pct"] / 100,
    )


def _compute_optimal(budget: float, tokens_per_param: float = 20):
    """(N, D) with 6 N D = budget and D = 20 N, by bisection on log N."""
    low, high = 0.0, math.log(budget)
    for _ in range(200):
        mid = (low + high) / 2
        n = math.exp(mid)
        low, high = (mid, high) if 6 * n * tokens_per_param * n < budget else (low, mid)
    n = math.exp((low + high) / 2)
    return n, tokens_per_param * n


def test_compute_optimal_gives_the_lessons_figures():
    # lesson chinchilla-tokens: Chinchilla's 70B on 1.4T tokens, 5.88e23 FLOPs;
    # GPT-2 small's (the built model's) compute-optimal data is 2.5B tokens
    n, d = _compute_optimal(6 * 70e9 * 1.4e12)
    assert round(n / 1e9) == 70 and round(d / 1e12, 1) == 1.4
    gpt2 = count(meta_gpt(50257, 1024, 12, 768, n_head=12).parameters())
    n, d = _compute_optimal(6 * gpt2 * 20 * gpt2)
    assert round(n) == gpt2 and round(d / 1e9, 1) == 2.5


@checker("chinchilla-tokens", seeds=25)
def _(v):
    budget = v.params["mantissa"] * 10 ** v.params["exponent"]
    _n, tokens = _compute_optimal(budget)
    return tokens


# Independent checks: training and inference -----------------------------------------


@checker("predictions-per-batch", seeds=20)
def _(v):
    rows = torch.empty((v.params["batch"], v.params["row_len"]), dtype=torch.long)
    inputs, targets = rows[:, :-1].to("meta"), rows[:, 1:].to("meta")
    logits = torch.empty((*inputs.shape, 5), device="meta")
    losses = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
    return losses.numel()


@checker("cosine-lr", seeds=8)
def _(v):
    p = v.params
    assert p["warmup"] <= p["step"] <= p["decay"]  # inside the cosine part
    weight = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([weight], lr=p["peak"])
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(
        opt, T_max=p["decay"] - p["warmup"], eta_min=p["peak"] / 10
    )
    opt.step()
    for _ in range(p["step"] - p["warmup"]):  # the decay starts after warmup
        schedule.step()
    return opt.param_groups[0]["lr"]


@checker("decay-group-params", seeds=12)
def _(v):
    model = meta_gpt(**gpt_shape(v.params), tied=True)
    # nanoGPT's configure_optimizers: every named tensor with dim >= 2
    params = dict(model.named_parameters())
    return sum(p.numel() for p in params.values() if p.dim() >= 2)


@checker("grad-total-norm", seeds=25)
def _(v):
    gen = torch.Generator().manual_seed(7)
    params = []
    for name, size in (("norm_a", 5), ("norm_b", 7), ("norm_c", 3)):
        g = torch.randn(size, generator=gen, dtype=torch.float64)
        param = torch.zeros(size, dtype=torch.float64, requires_grad=True)
        param.grad = g * v.params[name] / torch.linalg.vector_norm(g)
        params.append(param)
    return torch.nn.utils.clip_grad_norm_(params, max_norm=1e9).item()


@checker("adamw-decay-step", seeds=25)
def _(v):
    p = v.params

    def first_step(optimizer, **kwargs):
        weight = torch.tensor([p["value"]], dtype=torch.float64, requires_grad=True)
        weight.grad = torch.zeros_like(weight)
        kwargs = {"weight_decay": p["weight_decay"], **kwargs}
        optimizer([weight], lr=p["lr"], **kwargs).step()
        return weight.item()

    absolute, relative = variants.tolerance(SPECS["adamw-decay-step"])
    slips = dict((m.diagnosis, value) for m, value in v.wrong)
    # the L2 misconception is what plain Adam's weight_decay does (its eps
    # aside: the slip is the step by hand, lr in the gradient's sign)
    l2 = first_step(torch.optim.Adam, eps=0.0)
    assert within(Decimal(str(l2)), slips["l2-not-decoupled"], absolute, relative)
    # "no change" is the step with no decay at all: Adam, weight_decay 0
    kept = first_step(torch.optim.Adam, weight_decay=0.0)
    assert within(Decimal(str(kept)), slips["zero-grad-no-change"], absolute, relative)
    return first_step(torch.optim.AdamW)


# Independent checks: the test ------------------------------------------------------


def test_every_template_has_an_independent_checker():
    assert set(CHECKERS) == set(SPECS)


def _agree(expected, answer) -> bool:
    if isinstance(answer, tuple | str):
        return expected == answer
    if isinstance(answer, int) and not isinstance(answer, bool):
        return isinstance(expected, int) and expected == answer
    return math.isclose(expected, answer, rel_tol=1e-9)


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_answer_matches_an_independent_computation(slug):
    if slug not in CHECKERS:
        pytest.fail(f"no independent checker for {slug}")
    spec = SPECS[slug]
    check, seeds = CHECKERS[slug]
    for seed in range(seeds):
        v = variants.render(spec, f"independent-{seed}")
        expected = check(v)
        assert _agree(expected, v.answer), (
            f"seed {seed}, {v.params}: the template says {v.answer!r}, "
            f"the independent computation {expected!r}"
        )
