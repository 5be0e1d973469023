"""content/diagnoses.yaml: complete, pointing at real lessons, loaded idempotently."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest
import yaml
from grading_engine.checks.fingerprints import MISTAKES

from quiz.content.diagnoses import DiagnosesInvalid, diagnosis_load
from quiz.content.loader import content_load
from quiz.content.tree import read_content_tree
from quiz.models import Diagnosis, Lesson, Section
from tests.conftest import PROJECT_ROOT

CONTENT = PROJECT_ROOT / "content"
DIAGNOSES = CONTENT / "diagnoses.yaml"
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)+$")


def mapped() -> dict[str, list[str]]:
    data = yaml.safe_load(DIAGNOSES.read_text())
    return {item["slug"]: item["lessons"] for item in data["diagnoses"]}


def lesson_slugs_under_content() -> set[str]:
    slugs = set()
    for path in CONTENT.glob("*/*.md"):
        text = path.read_text()
        if text.startswith("---"):
            meta = yaml.safe_load(text.split("---", 2)[1]) or {}
            if "slug" in meta and "question" in meta:  # lessons, not _section.md
                slugs.add(meta["slug"])
    return slugs


def diagnoses_in_grader_code() -> set[str]:
    """Slugs the harnesses and checks hand to CheckResult(diagnosis=...)."""
    found = set()
    for path in [
        *(PROJECT_ROOT / "engine" / "grading_engine" / "exercises").rglob("*.py"),
        *(PROJECT_ROOT / "engine" / "grading_engine" / "checks").glob("*.py"),
    ]:
        for node in ast.walk(ast.parse(path.read_text())):
            values = []
            if isinstance(node, ast.keyword) and node.arg == "diagnosis":
                values.append(node.value)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and "diagnosis" in t.id for t in node.targets
            ):
                values.append(node.value)
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") == "Variant"
                and node.args
            ):
                values.append(node.args[0])
            elif (
                isinstance(node, ast.Return)
                and isinstance(node.value, ast.Tuple)
                and len(node.value.elts) == 2
            ):
                values.append(node.value.elts[0])  # `return "slug", hint`
            elif (
                isinstance(node, ast.Tuple)
                and len(node.elts) == 3
                and (
                    isinstance(node.elts[2], ast.JoinedStr)
                    or " " in str(getattr(node.elts[2], "value", ""))  # a hint
                )
            ):
                values.append(node.elts[1])  # a `(value, "slug", "hint")` table row
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    if KEBAB.match(value.value):
                        found.add(value.value)
    return found


def diagnoses_in_exercise_files() -> set[str]:
    found = set()
    for path in (CONTENT / "exercises").glob("*.yaml"):
        for wrong in yaml.safe_load(path.read_text()).get("wrong_solutions") or []:
            if wrong.get("diagnosis"):
                found.add(wrong["diagnosis"])
    return found


def test_every_diagnosis_the_grader_can_name_is_mapped():
    named = diagnoses_in_exercise_files() | set(MISTAKES) | diagnoses_in_grader_code()
    assert {"copied-not-shared", "missing-scale", "forgot-biases"} <= named
    missing = sorted(named - set(mapped()))
    assert not missing, f"add these to content/diagnoses.yaml: {missing}"


def test_every_lesson_it_names_exists_under_content():
    lessons = lesson_slugs_under_content()
    unknown = {
        (slug, lesson)
        for slug, named in mapped().items()
        for lesson in named
        if lesson not in lessons
    }
    assert lessons and not unknown


def test_a_diagnosis_with_lessons_lists_the_lesson_of_each_exercise_naming_it():
    """A diagnosis with lessons gets only those (no fallback to the
    exercise's own): a learner who made it on another exercise would be sent
    to review lessons that never mention that exercise's idea."""
    lessons = mapped()
    missing = set()
    for exercise in read_content_tree(CONTENT).exercises:
        for wrong in exercise.wrong_solutions:
            named = lessons.get(wrong.get("diagnosis"))
            if named and exercise.lesson not in named:
                missing.add((wrong["diagnosis"], exercise.lesson))
    assert not missing, f"add these lessons to content/diagnoses.yaml: {missing}"


@pytest.mark.django_db
def test_the_real_file_loads_against_the_real_lessons():
    content_load(root=CONTENT)
    count = diagnosis_load(path=DIAGNOSES)
    assert count == len(mapped()) == Diagnosis.objects.count()
    tying = Diagnosis.objects.get(slug="copied-not-shared")
    tying_lessons = {lesson.slug for lesson in tying.lessons.all()}
    assert tying_lessons == {"weight-tying-124m", "tie-weights-in-pytorch"}
    assert "shar" in tying.summary


def write(tmp_path, text: str):
    path = tmp_path / "diagnoses.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def two_lessons(db):
    section = Section.objects.create(slug="s", order=1, title="S")
    return [
        Lesson.objects.create(
            section=section, slug=slug, order=i, title=slug, question="?", body="b"
        )
        for i, slug in enumerate(["alpha", "beta"], start=1)
    ]


GOOD = """\
diagnoses:
  - slug: missing-scale
    summary: No 1/sqrt(d).
    lessons: [alpha, beta]
  - slug: not-an-int
    summary: Generic.
    lessons: []
"""


def test_loading_twice_gives_the_same_rows(tmp_path, two_lessons):
    path = write(tmp_path, GOOD)
    assert diagnosis_load(path=path) == 2
    assert diagnosis_load(path=path) == 2
    assert Diagnosis.objects.count() == 2
    row = Diagnosis.objects.get(slug="missing-scale")
    assert sorted(lesson.slug for lesson in row.lessons.all()) == ["alpha", "beta"]
    assert row.summary == "No 1/sqrt(d)."


def test_an_edit_updates_summary_and_lessons_in_place(tmp_path, two_lessons):
    diagnosis_load(path=write(tmp_path, GOOD))
    pk = Diagnosis.objects.get(slug="missing-scale").pk
    diagnosis_load(path=write(tmp_path, GOOD.replace("[alpha, beta]", "[beta]")))
    row = Diagnosis.objects.get(slug="missing-scale")
    assert row.pk == pk
    assert [lesson.slug for lesson in row.lessons.all()] == ["beta"]


def test_an_unknown_lesson_is_refused_with_file_and_line_and_nothing_written(
    tmp_path, two_lessons
):
    path = write(tmp_path, GOOD.replace("[]", "[alpha, gamma]"))
    with pytest.raises(DiagnosesInvalid) as exc:
        diagnosis_load(path=path)
    assert f"{path}:5: not-an-int: unknown lesson 'gamma'" in str(exc.value)
    assert not Diagnosis.objects.exists()  # the valid first entry was not written


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("- slug: a\n", "expected a mapping with a `diagnoses:` list"),
        ("diagnoses: [1]\n", "each diagnosis is a mapping"),
        ("diagnoses:\n  - slug: Bad Slug\n", "is not a lowercase-hyphenated slug"),
        ("diagnoses:\n  - slug: a\n    lesson: [alpha]\n", "unknown keys: lesson"),
        ("diagnoses:\n  - slug: a\n  - slug: a\n", "listed twice (first at line 2)"),
        ("diagnoses:\n  - slug: a\n    lessons: alpha\n", "must be a list of lesson"),
        ("diagnoses: [\n", "cannot read"),
    ],
)
def test_a_malformed_file_gets_a_clear_reason(tmp_path, two_lessons, text, reason):
    with pytest.raises(DiagnosesInvalid, match=re.escape(reason)):
        diagnosis_load(path=write(tmp_path, text))
    assert not Diagnosis.objects.exists()
