"""The shipped course meets the lesson format: every lesson, every exercise.

The rules each lesson must meet are asserted for every lesson, and the
course totals (60 lessons, 60 exercises, 20 figures) once.
"""

from __future__ import annotations

import re

import pytest
import yaml

from quiz.content.tree import read_content_tree
from tests.conftest import PROJECT_ROOT
from tests.content.test_doctests import doctest_blocks

CONTENT = PROJECT_ROOT / "content"
TREE = read_content_tree(CONTENT)
# Syllabus numbers marked [ex] in SYLLABUS.md: those lessons need an exercise.
EXERCISE_LESSONS = {
    1, 3, 4, 5, 8, 10, 11, 12, 13, 14, 15, 16, 18, 19, 21, 22, 23, 26, 27, 30,
    31, 32, 33, 34, 35, 37, 38, 39, 40, 41, 42, 43, 45, 46, 48, 49, 50, 51, 53,
    54, 55, 56, 59, 60,
    # and the lessons issue 20 ("practice in every lesson") gave an exercise
    20, 24, 25, 28, 29, 36, 44, 47, 52, 57, 58,
}  # fmt: skip
SECTIONS = {
    "tokens-and-embeddings": range(1, 11),
    "attention": range(11, 21),
    "the-block": range(21, 31),
    "output-head-and-tying": range(31, 41),
    "counting": range(41, 51),
    "training-and-inference": range(51, 61),
}
BODY_SECTIONS = [
    "## What you need to know",
    "## Why it works",
    "## When it differs",
    "## A real-life example",
]
LESSONS = [pytest.param(lesson, id=lesson.slug) for lesson in TREE.lessons]


def test_six_sections_in_syllabus_order():
    assert [(s.order, s.slug) for s in TREE.sections] == [
        (i + 1, slug) for i, slug in enumerate(SECTIONS)
    ]


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_sits_at_its_syllabus_number(lesson):
    assert lesson.order in SECTIONS[lesson.section], (
        f"{lesson.path.name}: order {lesson.order} is not in section {lesson.section}"
    )
    assert lesson.path.name.startswith(f"{lesson.order:02d}-")


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_has_the_parts_of_an_answer(lesson):
    assert lesson.takeaway.strip() and lesson.question.strip() and lesson.tags
    positions = [lesson.body.find(heading) for heading in BODY_SECTIONS]
    assert all(p >= 0 for p in positions), f"{lesson.path.name} misses a section"
    assert positions == sorted(positions), f"{lesson.path.name}: sections out of order"


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_has_follow_ups_and_mixed_self_checks(lesson):
    assert len(lesson.follow_ups) >= 4, lesson.path.name
    assert len(lesson.questions) >= 3, lesson.path.name
    kinds = {q["kind"] for q in lesson.questions}
    assert len(kinds) >= 2, f"{lesson.path.name}: self-checks are all {kinds}"
    for question in lesson.questions:
        assert str(question.get("explanation", "")).strip(), (
            f"{lesson.path.name}: self-check {question['prompt'][:40]!r} "
            "has no explanation"
        )


@pytest.mark.parametrize("lesson", LESSONS)
def test_exercise_lessons_carry_an_exercise(lesson):
    if lesson.order not in EXERCISE_LESSONS:
        pytest.skip("not an [ex] lesson")
    owned = {e.slug for e in TREE.exercises if e.lesson == lesson.slug}
    assert owned, f"{lesson.path.name} is marked [ex] but has no exercise"


@pytest.mark.parametrize(
    "exercise", [pytest.param(e, id=e.slug) for e in TREE.exercises]
)
def test_exercise_has_two_realistic_wrong_solutions(exercise):
    assert len(exercise.wrong_solutions) >= 2, exercise.path.name
    for wrong in exercise.wrong_solutions:
        assert wrong.get("name") and wrong.get("diagnosis"), exercise.path.name
    lessons = {lesson.slug for lesson in TREE.lessons}
    assert exercise.lesson is None or exercise.lesson in lessons


def test_every_figure_script_is_used_by_a_lesson():
    used = {name for lesson in TREE.lessons for name in lesson.figures}
    scripts = {p.stem for p in (CONTENT / "figures").glob("*.py")}
    assert scripts <= used, f"unused figure scripts: {sorted(scripts - used)}"


def test_exercise_slugs_match_their_file_names():
    for exercise in TREE.exercises:
        assert exercise.path.stem == exercise.slug
        data = yaml.safe_load(exercise.path.read_text(encoding="utf-8"))
        assert re.fullmatch(r"[a-z0-9-]+", data["harness"])


def test_the_course_is_complete():
    """Issue 8's totals, with issue 20's exercises: 60 lessons, 60+ exercises,
    20+ lessons with a figure."""
    orders = sorted(lesson.order for lesson in TREE.lessons)
    assert orders == list(range(1, 61)), f"missing: {set(range(1, 61)) - set(orders)}"
    assert len(TREE.exercises) >= 60
    assert sum(1 for lesson in TREE.lessons if lesson.figures) >= 20


# Lessons without an exercise that carry a "Predict, then run" block instead
# (issue 20); the block's format is in docs/content-format.md.
PREDICT_LESSONS = {
    "byte-level-bpe",
    "sinusoidal-learned-rope",
    "endoftext-special-tokens",
    "token-counts-across-tokenizers",
    "attention-quadratic-flashattention",
}
PREDICT_HEADING = "## Predict, then run"


def predict_block(body: str) -> str | None:
    """The text of the Predict, then run section, up to the next ## heading."""
    start = body.find(PREDICT_HEADING)
    if start < 0:
        return None
    end = body.find("\n## ", start + len(PREDICT_HEADING))
    return body[start : end if end >= 0 else len(body)]


def test_predict_lessons_exist_and_have_no_exercise():
    slugs = {lesson.slug for lesson in TREE.lessons}
    assert PREDICT_LESSONS <= slugs
    owned = {e.lesson for e in TREE.exercises}
    assert not PREDICT_LESSONS & owned, "give a lesson an exercise or a block, not both"


@pytest.mark.parametrize(
    "lesson",
    [pytest.param(lesson, id=lesson.slug) for lesson in TREE.lessons],
)
def test_predict_then_run_block_asks_runs_and_answers(lesson):
    block = predict_block(lesson.body)
    if lesson.slug not in PREDICT_LESSONS:
        pytest.skip("no Predict, then run block required")
    assert block is not None, f"{lesson.path.name} has no '{PREDICT_HEADING}'"
    assert lesson.body.find(PREDICT_HEADING) > lesson.body.find(BODY_SECTIONS[-1])
    predict, answer = block.find("**Predict:**"), block.find("**Answer:**")
    code = doctest_blocks(block)
    assert predict >= 0 and answer >= 0, f"{lesson.path.name}: Predict/Answer missing"
    assert code, f"{lesson.path.name}: the block has no doctested ```python code"
    assert not any(needs_real for _, _, needs_real in code), (
        f"{lesson.path.name}: the block must run in CI, without the real weights"
    )
    first_code = block.find("```python")
    assert predict < first_code < answer, (
        f"{lesson.path.name}: ask first, then the code, then the answer"
    )
    assert "?" in block[predict:first_code], f"{lesson.path.name}: no question asked"
    assert len(block[answer:].split()) >= 30, f"{lesson.path.name}: explain the answer"
