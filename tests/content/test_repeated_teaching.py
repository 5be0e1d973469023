"""One lesson owns GPT-2 small's parameter count; the others link to it (issue 20).

The count was derived again in four lessons and quoted in seventeen. Quoting
the total as an input (weight bytes are N x 2, training FLOPs 6N) is fine;
deriving it is the owner's job. A lesson derives the total when it shows
the parts that add up to it: the token table, the position table and the
blocks next to 124,439,808, or the whole-model formula (T·d + L·(12d² + 13d),
in any notation). Every lesson that states the full number links to the owner,
so a learner who wonders where it comes from is one click from the answer.
"""

from __future__ import annotations

import re

import pytest

from quiz.content.tree import read_content_tree
from tests.conftest import PROJECT_ROOT

TREE = read_content_tree(PROJECT_ROOT / "content")
OWNER = "parameter-formula"
OWNER_LINK = f"/lessons/{OWNER}/"
TOTAL = 124_439_808
WTE, WPE = 38_597_376, 786_432
BLOCKS = {85_054_464, 84_934_656}  # 12 blocks whole, or their 12·L·d² matrices
# The whole-model formula: the position table, then L blocks of 12d² + 13d
# (any of ·, x, *); L blocks alone are a lesson's own business.
_TIMES = r"\s*(?:·|x|\*)\s*"
WHOLE_MODEL_FORMULA = re.compile(rf"\bT{_TIMES}d\s*\+\s*L{_TIMES}\(\s*12")
LESSONS = [pytest.param(lesson, id=lesson.slug) for lesson in TREE.lessons]


def _text(lesson) -> str:
    """Body plus every front-matter text a learner sees."""
    parts = [lesson.takeaway, lesson.body]
    for item in lesson.follow_ups:
        parts += [str(item["question"]), str(item["answer"])]
    for question in lesson.questions:
        parts += [str(v) for k, v in question.items() if k != "kind"]
    return "\n".join(parts)


def _numbers(text: str) -> set[int]:
    """Every integer in the text, with 124,439,808 / 124_439_808 read as one."""
    joined = re.sub(r"(?<=\d)[,_](?=\d{3}(?!\d))", "", text)
    return {int(n) for n in re.findall(r"\d+(?:\.\d+)?", joined) if "." not in n}


def derives_total(text: str) -> bool:
    numbers = _numbers(text)
    parts_summed = TOTAL in numbers and {WTE, WPE} <= numbers and numbers & BLOCKS
    return bool(parts_summed or WHOLE_MODEL_FORMULA.search(text))


def test_the_detector_sees_a_breakdown_and_a_formula_but_not_a_quote():
    table = "| wte | 38,597,376 |\n| wpe | 786,432 |\n| 12 blocks | 85,054,464 |\n"
    assert derives_total(table + "| total | 124,439,808 |")
    assert derives_total("N = V·d + T·d + L·(12d² + 13d) + 2d")
    assert derives_total("n = V * d + T * d + L * (12 * d * d + 13 * d) + 2 * d")
    assert not derives_total("6N FLOPs with N = 124,439,808, 38,597,376 in wte")
    assert not derives_total("one block is 12d^2 + 13d = 7,087,872")
    assert not derives_total("blocks = L * (12 * d * d + 13 * d)")
    assert _numbers("124.4M, 124_439_808 and 38,597,376") == {124439808, 38597376}


def test_the_owner_derives_the_count_in_full():
    owner = next(lesson for lesson in TREE.lessons if lesson.slug == OWNER)
    assert derives_total(owner.body)
    assert {TOTAL, WTE, WPE, 163_037_184} <= _numbers(owner.body)


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_other_lesson_derives_the_full_count(lesson):
    if lesson.slug == OWNER:
        pytest.skip("the owner")
    assert not derives_total(_text(lesson)), (
        f"{lesson.path.name} derives GPT-2 small's {TOTAL:,} again; "
        f"quote it and link to {OWNER_LINK} instead"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_lesson_stating_the_count_links_to_its_owner(lesson):
    if lesson.slug == OWNER or TOTAL not in _numbers(_text(lesson)):
        pytest.skip("the owner, or the full count is not stated")
    assert OWNER_LINK in lesson.body, (
        f"{lesson.path.name} states {TOTAL:,} without linking to {OWNER_LINK}"
    )


def test_lesson_links_name_real_lessons():
    slugs = {lesson.slug for lesson in TREE.lessons}
    for lesson in TREE.lessons:
        for slug in re.findall(r"\]\(/lessons/([^/)]+)/\)", lesson.body):
            assert slug in slugs, f"{lesson.path.name} links to unknown lesson {slug!r}"
