"""Every number a lesson states comes from a doctest that runs here."""

from __future__ import annotations

import contextlib
import copy
import doctest
import os
import re
from pathlib import Path

import pytest

from quiz.content.tree import _split_front_matter, read_content_tree
from tests.conftest import PROJECT_ROOT

# A lesson leaves the process as it found it, down to the global generator.
pytestmark = pytest.mark.strict_torch_state

CONTENT = PROJECT_ROOT / "content"
REAL_WEIGHTS_MARK = "<!-- doctest: requires-real-weights -->"
# A block whose figures are exact in IEEE arithmetic on every CPU (a one-hot
# product, exp(0) = 1, an overflow to inf), which FloatNoise would blur.
EXACT_MARK = "<!-- doctest: exact -->"
_FENCE = re.compile(
    r"(?P<mark><!-- doctest: [^>]*-->\s*\n)?```python\n(?P<code>.*?)```", re.S
)


def doctest_blocks(body: str) -> list[tuple[int, str, bool]]:
    """(line, source, needs_real_weights) for each ```python block holding >>>."""
    blocks = []
    for match in _FENCE.finditer(body):
        code = match.group("code")
        if ">>>" in code:
            line = body[: match.start("code")].count("\n") + 1
            needs_real = REAL_WEIGHTS_MARK in (match.group("mark") or "")
            blocks.append((line, code, needs_real))
    return blocks


def exact_block_lines(body: str) -> set[int]:
    """Lines (as doctest_blocks counts them) of the blocks marked exact."""
    return {
        body[: match.start("code")].count("\n") + 1
        for match in _FENCE.finditer(body)
        if EXACT_MARK in (match.group("mark") or "")
    }


def lesson_files() -> list[tuple[Path, str]]:
    """(path, body) of every lesson file, read one by one.

    Not through read_content_tree: a cross-reference problem in one file
    (checked by the loader's own tests) must not hide every lesson's doctests.
    """
    files = []
    for path in sorted(CONTENT.glob("*/[0-9]*.md")):
        parts = _split_front_matter(path, [])
        if parts is not None:
            files.append((path, parts[1]))
    return files


def float_noise(exact: bool):
    """DOCTEST_FLOAT_NOISE=1: run under FloatNoise (rounding noise on every
    float kernel), as make test does once, so a figure quoted at its rounding
    level fails here rather than on another machine."""
    if exact or os.environ.get("DOCTEST_FLOAT_NOISE") != "1":
        return contextlib.nullcontext()
    from tests.content.float_noise import FloatNoise

    return FloatNoise()


def lesson_blocks():
    for path, body in lesson_files():
        exact = exact_block_lines(body)
        for line, code, needs_real in doctest_blocks(body):
            rel = path.relative_to(PROJECT_ROOT)
            yield pytest.param(
                path, line, code, needs_real, line in exact, id=f"{rel}:{line}"
            )


@pytest.fixture(scope="module", autouse=True)
def _each_model_built_once():
    """Lessons build GPT-2 small in sixty-odd blocks; a build draws 124M
    seeded weights, which took most of this module's time. Here the first
    build of each (config, seed, tied) is kept and every call gets a deep
    copy of it: the same bit-identical weights build_model promises in any
    process (test_a_kept_build_is_a_fresh_build checks), and a copy of its
    own to change."""
    import grading_engine.reference as reference
    from grading_engine.reference import model

    original = model.build_model
    built: dict[tuple, object] = {}

    def build_model(config, *, seed: int = 0, tied: bool | None = None):
        key = (repr(config), seed, tied)
        if key not in built:
            built[key] = original(config, seed=seed, tied=tied)
        return copy.deepcopy(built[key])

    reference.build_model = model.build_model = build_model
    try:
        yield original
    finally:
        reference.build_model = model.build_model = original


def test_a_kept_build_is_a_fresh_build(_each_model_built_once):
    """What _each_model_built_once hands out: equal weights, the tie kept,
    eval mode, and a copy whose change leaves the next one untouched."""
    import torch
    from grading_engine.reference import build_model

    original = _each_model_built_once
    assert build_model is not original  # the fixture is in force here
    first = build_model("tiny", seed=3)
    first.transformer.wte.weight.data.zero_()
    again, fresh = build_model("tiny", seed=3), original("tiny", seed=3)
    assert not again.training and again.lm_head.weight is again.transformer.wte.weight
    fresh_state = fresh.state_dict()
    for name, tensor in again.state_dict().items():
        assert torch.equal(tensor, fresh_state[name]), name


@pytest.mark.parametrize(
    ("path", "line", "code", "needs_real", "exact"), list(lesson_blocks())
)
def test_lesson_doctest(path: Path, line: int, code: str, needs_real: bool, exact):
    if needs_real and not os.environ.get("GPT2_WEIGHTS_PATH"):
        pytest.skip("needs the real GPT-2 weights (GPT2_WEIGHTS_PATH)")
    parser = doctest.DocTestParser()
    test = parser.get_doctest(code, {}, f"{path.name}:{line}", str(path), line)
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    out: list[str] = []
    with float_noise(exact):
        runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
    assert runner.tries > 0


def test_every_lesson_carries_at_least_one_doctest():
    files = lesson_files()
    assert len(files) == len(read_content_tree(CONTENT).lessons)
    for path, body in files:
        assert doctest_blocks(body), f"{path} has no doctest"


def test_the_block_finder_sees_marks_and_skips_plain_code():
    body = (
        "text\n```python\nx = 1\n```\n"
        "```python\n>>> 1 + 1\n2\n```\n"
        f"{REAL_WEIGHTS_MARK}\n```python\n>>> 2\n2\n```\n"
    )
    blocks = doctest_blocks(body)
    assert [(needs_real) for _, _, needs_real in blocks] == [False, True]
    assert blocks[0][1].startswith(">>> 1 + 1")
