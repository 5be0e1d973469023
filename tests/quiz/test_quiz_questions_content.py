"""The quiz-only questions in content/quiz-questions, checked without the database.

Structure (where each belongs, what it cites, that no lesson shows it) and
above all the keys: every numeric key, and the number of every numeric
misconception, is recomputed here WITHOUT the question's own arithmetic,
by building the reference GPT-2 on the meta device, running torch's own
ops, or measuring a small model built for the purpose. A choice question's
right option cites the lessons that teach it in `lessons`.
"""

from __future__ import annotations

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
from grading_engine.quiz_bank.numbers import within
from grading_engine.reference.model import GPT, CausalSelfAttention, get_config
from torch.overrides import TorchFunctionMode

from quiz.content.quiz_questions import QUIZ_QUESTION_DIR, check

ROOT = Path(__file__).resolve().parents[2]
CONTENT = ROOT / "content"
FILES = sorted((CONTENT / QUIZ_QUESTION_DIR).glob("*.yaml"))
SPECS = {path.stem: yaml.safe_load(path.read_text()) for path in FILES}


def _front_matter(path: Path) -> dict:
    return yaml.safe_load(path.read_text().split("---", 2)[1])


SECTIONS = {_front_matter(p)["slug"] for p in CONTENT.glob("0*-*/_section.md")}
LESSON_FILES = sorted(CONTENT.glob("0*-*/[0-9]*-*.md"))
LESSONS = {_front_matter(p)["slug"] for p in LESSON_FILES}
DIAGNOSES = {
    d["slug"]
    for d in yaml.safe_load((CONTENT / "diagnoses.yaml").read_text())["diagnoses"]
}


# Structure ---------------------------------------------------------------------


def test_two_questions_in_every_section():
    assert len(SPECS) == 12
    per_section = Counter(spec["section"] for spec in SPECS.values())
    assert set(per_section) == SECTIONS and set(per_section.values()) == {2}


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_structure(slug):
    spec = check(SPECS[slug])
    assert spec["slug"] == slug
    assert spec["section"] in SECTIONS
    assert spec.get("lessons"), "a quiz-only question cites the lessons it tests"
    assert set(spec["lessons"]) <= LESSONS, set(spec["lessons"]) - LESSONS
    assert spec.get("explanation"), "the explanation says why the key is right"
    assert spec.get("misconceptions"), "its wrong answers are named"
    for m in spec["misconceptions"]:
        assert m.get("diagnosis") in DIAGNOSES, m
    if spec["kind"] == "choice":
        assert len(spec["choices"]) == 4
    else:
        assert slug in CHECKERS, "every numeric key is recomputed below"


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_no_lesson_shows_it(slug):
    """A quiz-only question is no self-check: no lesson file holds its prompt."""
    prompt = " ".join(check(SPECS[slug])["prompt"].split())
    for path in LESSON_FILES:
        assert prompt not in " ".join(path.read_text().split()), path


def test_the_right_options_are_spread_out():
    """With shuffling off, the options show in stored order: no fixed slot."""
    keys = [s["answer"] for s in SPECS.values() if s["kind"] == "choice"]
    assert len(set(keys)) >= 3, keys


# Independent checks ------------------------------------------------------------

# slug -> function returning (the key, {misconception answer: its value})
CHECKERS: dict[str, Callable[[], tuple[object, dict]]] = {}


def checker(slug: str):
    def register(fn):
        CHECKERS[slug] = fn
        return fn

    return register


def meta_gpt(**changes) -> GPT:
    with torch.device("meta"):
        return GPT(get_config("gpt2", **changes))


def count(model: nn.Module) -> int:
    """Parameters as model.parameters() yields them: a shared one once."""
    return sum(p.numel() for p in model.parameters())


@checker("vocabulary-growth-tied")
def _():
    def gain(tied: bool) -> int:
        grown = meta_gpt(vocab_size=60257, tied=tied)
        return count(grown) - count(meta_gpt(vocab_size=50257, tied=tied))

    rows = 60257 - 50257
    return gain(True), {15360000: gain(False), 10000: rows}


class _ScoreShapes(TorchFunctionMode):
    """Records the operands of every 4-D matmul (q @ k^T is the first)."""

    def __init__(self):
        super().__init__()
        self.operands: list[tuple] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("matmul", "__matmul__") and args[0].dim() == 4:
            self.operands.append((tuple(args[0].shape), tuple(args[1].shape)))
        return func(*args, **(kwargs or {}))


@checker("attention-scale-gpt2-xl")
def _():
    config = get_config("gpt2-xl")
    with torch.device("meta"):
        attention = CausalSelfAttention(config)
        x = torch.empty(1, 3, config.n_embd)
        with _ScoreShapes() as seen:
            attention(x)
    q_shape, k_t_shape = seen.operands[0]
    d_k = q_shape[-1]  # what one head's dot product sums over
    assert q_shape[1] == 25 and k_t_shape[-2] == d_k
    scale = 1 / math.sqrt(d_k)
    # torch's own attention uses the same default scale, 1/sqrt(q.size(-1)).
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, 3, d_k, generator=g) for _ in range(3))
    by_hand = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v
    assert torch.allclose(F.scaled_dot_product_attention(q, k, v), by_hand, atol=1e-6)
    return scale, {
        0.025: 1 / math.sqrt(config.n_embd),
        0.015625: 1 / d_k,
        1: 1.0,
    }


@checker("tied-init-linear-only")
def _():
    # GPT-2's vocabulary: 3.2M draws, so a sample's std is within 0.0004 of
    # its distribution's, far inside the question's tolerance (0.002).
    config = get_config("tiny", vocab_size=50257, n_layer=1, n_embd=64)
    g = torch.Generator().manual_seed(0)

    def init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.02, generator=g)

    with torch.random.fork_rng(), torch.no_grad():
        torch.manual_seed(0)  # the same draw in every run (fork_rng restores)
        model = GPT(config)  # PyTorch's defaults: nn.Embedding is N(0, 1)
        default_std = model.transformer.wte.weight.std().item()
        model.apply(init)
    assert model.lm_head.weight is model.transformer.wte.weight
    return model.transformer.wte.weight.std().item(), {1: default_std}


@checker("longer-context-params")
def _():
    return count(meta_gpt(block_size=2048)), {
        124439808: count(meta_gpt(block_size=1024)),
        163823616: count(meta_gpt(block_size=2048, tied=False)),
    }


@checker("mean-cross-entropy")
def _():
    right = torch.tensor([0.5, 0.25, 0.25, 0.125], dtype=torch.float64)
    # Logits over 5 tokens: token 0 gets `right`, the others share the rest.
    rest = ((1 - right) / 4).unsqueeze(1).expand(4, 4)
    logits = torch.cat([right.unsqueeze(1), rest], dim=1).log()
    targets = torch.zeros(4, dtype=torch.long)
    loss = F.cross_entropy(logits, targets).item()
    total = F.cross_entropy(logits, targets, reduction="sum").item()
    return loss, {2: loss / math.log(2), 5.5452: total, -1.3863: -loss}


@pytest.mark.parametrize("slug", sorted(CHECKERS))
def test_the_key_and_each_misconception_are_recomputed(slug):
    spec = check(SPECS[slug])
    tolerance = spec.get("tolerance", {})
    absolute = tolerance.get("absolute", 0)
    relative = tolerance.get("relative", 0)
    key, wrong = CHECKERS[slug]()
    assert within(Decimal(repr(key)), spec["answer"], absolute, relative), (
        key,
        spec["answer"],
    )
    named = {m["answer"] for m in spec["misconceptions"]}
    assert named == set(wrong), "every numeric misconception is recomputed"
    for stated, value in wrong.items():
        assert within(Decimal(repr(value)), stated, absolute, relative), (
            stated,
            value,
        )
        # ...and stays wrong: the key's tolerance does not take it in.
        assert not within(Decimal(repr(value)), spec["answer"], absolute, relative)


def test_every_numeric_question_has_a_checker():
    numeric = {slug for slug, s in SPECS.items() if s["kind"] == "numeric"}
    assert numeric == set(CHECKERS)
