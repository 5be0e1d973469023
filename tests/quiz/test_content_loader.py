"""load_content: good trees load idempotently; every kind of bad input is named."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from quiz.content.loader import content_load
from quiz.content.tree import ContentError, read_content_tree
from quiz.models import FollowUp, Lesson, Question, QuestionTemplate, Section
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.django_db


def load(tree) -> str:
    from io import StringIO

    out = StringIO()
    call_command("load_content", str(tree.root), stdout=out)
    return out.getvalue()


def problems_of(tree) -> list[str]:
    with pytest.raises(ContentError) as info:
        read_content_tree(tree.root)
    return [str(p) for p in info.value.problems]


def test_it_loads_sections_lessons_follow_ups_and_questions(content_tree):
    load(content_tree)
    assert list(Section.objects.values_list("slug", flat=True)) == [
        "basics",
        "advanced",
    ]
    lesson = Lesson.objects.get(slug="second-lesson")
    assert lesson.section.slug == "basics" and lesson.order == 2
    assert lesson.question == "What is second-lesson?"
    assert "## What you need to know" in lesson.body
    assert lesson.follow_ups.count() == 1
    kinds = list(lesson.questions.values_list("kind", flat=True))
    assert kinds == ["choice", "numeric", "recall"]
    numeric = lesson.questions.get(kind="numeric")
    assert numeric.numeric_answer == 7087872 and numeric.tolerance == 0


def test_it_prints_a_progress_line_per_file(content_tree):
    out = load(content_tree)
    assert "[1/5] created" in out
    assert "[5/5] created" in out and "third-lesson.md" in out


def test_a_second_run_changes_nothing(content_tree):
    load(content_tree)
    counts = (Section.objects.count(), Lesson.objects.count(), Question.objects.count())
    ids = list(Question.objects.order_by("pk").values_list("pk", flat=True))
    out = load(content_tree)
    assert "0 created, 0 updated, 5 unchanged" in out
    assert counts == (
        Section.objects.count(),
        Lesson.objects.count(),
        Question.objects.count(),
    )
    assert ids == list(Question.objects.order_by("pk").values_list("pk", flat=True))


def test_edits_are_applied_in_place(content_tree):
    load(content_tree)
    question_id = Question.objects.get(lesson__slug="first-lesson", order=0).pk
    content_tree.lesson("basics", 1, "first-lesson", title="Renamed", body="New body\n")
    out = load(content_tree)
    assert "1 updated" in out
    lesson = Lesson.objects.get(slug="first-lesson")
    assert lesson.title == "Renamed" and lesson.body == "New body\n"
    assert Question.objects.get(lesson=lesson, order=0).pk == question_id


def test_follow_ups_removed_from_a_file_are_removed(content_tree):
    load(content_tree)
    content_tree.lesson("basics", 1, "first-lesson", follow_ups=[])
    load(content_tree)
    assert not FollowUp.objects.filter(lesson__slug="first-lesson").exists()


def test_lessons_can_swap_places(content_tree):
    load(content_tree)
    content_tree.lesson("basics", 1, "second-lesson")
    content_tree.lesson("basics", 2, "first-lesson")
    for stale in content_tree.root.glob("01-basics/0[12]-*.md"):
        if stale.name not in ("01-second-lesson.md", "02-first-lesson.md"):
            stale.unlink()
    load(content_tree)
    assert Lesson.objects.get(slug="second-lesson").order == 1
    assert Lesson.objects.get(slug="first-lesson").order == 2


def test_a_lesson_removed_from_files_is_reported_not_deleted(content_tree):
    load(content_tree)
    next(content_tree.root.glob("*/01-third-lesson.md")).unlink()
    out = load(content_tree)
    assert "lesson 'third-lesson' is in the database but in no file" in out
    assert Lesson.objects.filter(slug="third-lesson").exists()


def test_a_missing_field_is_named_with_file_and_line(content_tree):
    path = content_tree.lesson("basics", 3, "no-title", title=None)
    [problem] = problems_of(content_tree)
    assert problem.startswith(f"{path}:")
    assert "missing required field 'title'" in problem


def test_a_wrong_type_points_at_the_line_of_the_field(content_tree):
    path = content_tree.lesson("basics", 3, "bad-order", reading_time="soon")
    [problem] = problems_of(content_tree)
    line = next(
        n
        for n, text in enumerate(path.read_text().splitlines(), 1)
        if text.startswith("reading_time:")
    )
    assert problem.startswith(f"{path}:{line}:")
    assert "'reading_time' must be an integer" in problem


def test_a_duplicate_slug_names_both_files(content_tree):
    first = next(content_tree.root.glob("*/01-first-lesson.md"))
    dup = content_tree.lesson("advanced", 2, "first-lesson")
    [problem] = problems_of(content_tree)
    assert str(dup) in problem and str(first) in problem
    assert "duplicate lesson slug 'first-lesson'" in problem


def test_bad_yaml_gives_the_line_of_the_error(content_tree):
    path = content_tree.raw(
        "01-basics/05-broken.md",
        """\
        ---
        section: basics
        order: 5
        slug: broken
        title: [unclosed
        question: Q?
        ---
        Body.
        """,
    )
    [problem] = problems_of(content_tree)
    assert problem.startswith(f"{path}:")
    line = int(problem.split(":")[1])
    assert 5 <= line <= 7
    assert "invalid YAML" in problem


def test_an_unknown_section_lists_the_known_ones(content_tree):
    content_tree.lesson("basics", 4, "lost", section="nowhere")
    [problem] = problems_of(content_tree)
    assert "unknown section 'nowhere' (known: advanced, basics)" in problem


def test_a_missing_front_matter_is_reported(content_tree):
    path = content_tree.raw("01-basics/06-plain.md", "# Just markdown\n")
    [problem] = problems_of(content_tree)
    assert problem == f"{path}:1: missing YAML front matter (first line must be ---)"


def test_a_bad_self_check_is_explained(content_tree):
    question = {"kind": "choice", "prompt": "?", "choices": ["a", "b"], "answer": 5}
    content_tree.lesson("basics", 3, "bad-q", questions=[question])
    [problem] = problems_of(content_tree)
    assert "question 1: 'answer' 5 is not an index into 2 choices" in problem


def test_every_problem_is_reported_at_once(content_tree):
    content_tree.lesson("basics", 3, "one", title=None)
    content_tree.lesson("basics", 4, "two", section="nowhere")
    assert len(problems_of(content_tree)) == 2


def test_bad_input_writes_nothing(content_tree):
    content_tree.lesson("advanced", 2, "broken", question=None)
    with pytest.raises(CommandError) as info:
        load(content_tree)
    assert "1 problem in" in str(info.value) and "nothing was loaded" in str(info.value)
    assert not Section.objects.exists() and not Lesson.objects.exists()


def test_a_failure_after_some_rows_rolls_everything_back(content_tree, monkeypatch):
    import quiz.content.loader as services

    real = services._sync_children
    calls = {"n": 0}

    def explode(lesson, model, rows):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk on fire")
        return real(lesson, model, rows)

    monkeypatch.setattr(services, "_sync_children", explode)
    with pytest.raises(RuntimeError):
        content_load(root=content_tree.root)
    assert not Lesson.objects.exists() and not Section.objects.exists()


def test_the_shipped_content_loads():
    report = content_load(root=PROJECT_ROOT / "content")
    assert Section.objects.count() == 6
    assert Lesson.objects.count() >= 3
    assert not report.updated and not report.missing_from_files
    for lesson in Lesson.objects.all():
        assert lesson.follow_ups.count() >= 4, lesson.slug
        assert lesson.questions.count() >= 3, lesson.slug


EXERCISE_YAML = """\
slug: {slug}
{lesson}title: Count one block
harness: block-param-count
entry_point: block_param_count
signature: "block_param_count(n_embd) -> int"
prompt: Count.
starter: |
  def block_param_count(n_embd):
      ...
solution: |
  def block_param_count(n_embd):
      return 12 * n_embd**2 + 13 * n_embd
"""


def test_a_lesson_that_lists_an_exercise_owns_it(content_tree):
    from grader.models import Exercise

    content_tree.raw(
        "exercises/count-block.yaml",
        EXERCISE_YAML.format(slug="count-block", lesson=""),
    )
    content_tree.lesson("basics", 3, "blocks", exercises=["count-block"])
    load(content_tree)
    assert Exercise.objects.get(slug="count-block").lesson.slug == "blocks"


def test_an_exercise_claimed_by_two_lessons_is_refused(content_tree):
    content_tree.raw(
        "exercises/count-block.yaml",
        EXERCISE_YAML.format(slug="count-block", lesson="lesson: first-lesson\n"),
    )
    content_tree.lesson("basics", 3, "blocks", exercises=["count-block"])
    [problem] = problems_of(content_tree)
    assert "lesson 'first-lesson' here, but" in problem and "blocks.md lists" in problem


def test_a_title_longer_than_its_column_is_refused_before_any_write(content_tree):
    content_tree.lesson("basics", 3, "long", title="x" * 201)
    [problem] = problems_of(content_tree)
    assert "'title' is 201 characters; the limit is 200" in problem


def test_the_diagnoses_file_loads_with_the_lessons(content_tree):
    from quiz.models import Diagnosis

    content_tree.raw(
        "diagnoses.yaml",
        """\
        diagnoses:
          - slug: missing-scale
            summary: Forgot to divide by sqrt(d_k).
            lessons: [first-lesson]
        """,
    )
    report = content_load(root=content_tree.root)
    row = Diagnosis.objects.get(slug="missing-scale")
    assert [lesson.slug for lesson in row.lessons.all()] == ["first-lesson"]
    assert "diagnoses diagnoses.yaml" in report.created
    again = content_load(root=content_tree.root)
    assert "diagnoses diagnoses.yaml" in again.unchanged


def test_a_diagnosis_naming_an_unknown_lesson_refuses_the_whole_load(content_tree):
    from quiz.models import Diagnosis

    content_tree.raw(
        "diagnoses.yaml",
        """\
        diagnoses:
          - slug: missing-scale
            summary: Forgot to divide by sqrt(d_k).
            lessons: [no-such-lesson]
        """,
    )
    with pytest.raises(ContentError) as info:
        content_load(root=content_tree.root)
    assert "unknown lesson 'no-such-lesson'" in str(info.value)
    assert not Lesson.objects.exists() and not Diagnosis.objects.exists()


TEMPLATE_YAML = """\
slug: {slug}
title: Parameters
section: basics
lessons: [{lesson}]
kind: numeric
prompt: "{n_layer} blocks of width {n_embd}: parameters?"
params:
  n_layer: {{from: 1, to: 12}}
  n_embd: [64, 128]
answer: {answer}
"""


def test_question_templates_load_with_their_lessons(content_tree):
    content_tree.raw(
        "quiz-templates/params.yaml",
        TEMPLATE_YAML.format(
            slug="params",
            lesson="first-lesson",
            answer="gpt2_params_tied",
            n_layer="{n_layer}",
            n_embd="{n_embd}",
        ),
    )
    report = content_load(root=content_tree.root)
    assert "template content/quiz-templates/params.yaml" in report.created
    template = QuestionTemplate.objects.get(slug="params")
    assert [le.slug for le in template.lessons.all()] == ["first-lesson"]
    assert template.spec["answer"] == "gpt2_params_tied"
    again = content_load(root=content_tree.root)
    assert "template content/quiz-templates/params.yaml" in again.unchanged


def test_a_bad_template_stops_the_load_with_its_file_and_reason(content_tree):
    fields = {"n_layer": "{n_layer}", "n_embd": "{n_embd}"}
    content_tree.raw(
        "quiz-templates/typed.yaml",
        TEMPLATE_YAML.format(
            slug="typed", lesson="first-lesson", answer="typed_by_hand", **fields
        ),
    )
    content_tree.raw(
        "quiz-templates/lost.yaml",
        TEMPLATE_YAML.format(
            slug="lost", lesson="no-such-lesson", answer="gpt2_params_tied", **fields
        ),
    )
    with pytest.raises(ContentError) as raised:
        content_load(root=content_tree.root)
    text = str(raised.value)
    assert "typed.yaml" in text and "no answer function 'typed_by_hand'" in text
    assert not Lesson.objects.exists()  # nothing was loaded
    (content_tree.root / "quiz-templates" / "typed.yaml").unlink()
    with pytest.raises(ContentError) as raised:
        content_load(root=content_tree.root)
    assert "lost.yaml" in str(raised.value) and "no-such-lesson" in str(raised.value)
    assert not QuestionTemplate.objects.exists() and not Lesson.objects.exists()
