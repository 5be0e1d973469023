"""Export: database -> content/ files, the inverse of load_content."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.db import models

from grader.models import Exercise
from quiz.content.export import content_export
from quiz.content.loader import content_load
from quiz.content.tree import ContentError
from quiz.models import (
    FollowUp,
    Lesson,
    Question,
    QuestionTemplate,
    QuizQuestion,
    Section,
)
from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.django_db

NATURAL_KEYS = {
    Section: ("slug",),
    Lesson: ("slug",),
    FollowUp: ("lesson", "order"),
    Question: ("lesson", "order"),
    Exercise: ("slug",),
    QuestionTemplate: ("slug",),
    QuizQuestion: ("slug",),
}


def _row(obj: models.Model) -> dict:
    """Every field but ids and timestamps; related rows by their slug."""
    row = {}
    for field in obj._meta.concrete_fields:
        if field.primary_key or getattr(field, "auto_now", False):
            continue
        if field.is_relation:
            related = getattr(obj, field.name)
            row[field.name] = related.slug if related is not None else None
        else:
            row[field.name] = field.value_from_object(obj)
    return row


def dump() -> dict[str, list[dict]]:
    result = {}
    for model, key in NATURAL_KEYS.items():
        rows = [_row(obj) for obj in model.objects.all()]
        result[model.__name__] = sorted(rows, key=lambda r: [str(r[k]) for k in key])
    return result


def wipe() -> None:
    Exercise.objects.all().delete()
    QuestionTemplate.objects.all().delete()
    QuizQuestion.objects.all().delete()
    Lesson.objects.all().delete()
    Section.objects.all().delete()


def quiz_question_lessons() -> dict[str, list[str]]:
    """The many-to-many links _row leaves out: each quiz-only question's lessons."""
    return {
        q.slug: sorted(le.slug for le in q.lessons.all())
        for q in QuizQuestion.objects.prefetch_related("lessons")
    }


def files_of(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_load_export_load_gives_the_same_database(tmp_path):
    content_load(root=PROJECT_ROOT / "content")
    before = dump()
    # The dump is not vacuous: every kind of record and question is in it.
    assert len(before["Section"]) >= 6
    assert len(before["Lesson"]) >= 5
    assert len(before["Exercise"]) >= 14
    assert {q["kind"] for q in before["Question"]} == {"choice", "numeric", "recall"}
    assert any(e["wrong_solutions"] for e in before["Exercise"])
    assert any(e["right_solutions"] for e in before["Exercise"])
    assert any(e["lesson"] for e in before["Exercise"])
    assert len(before["QuestionTemplate"]) >= 30
    assert len(before["QuizQuestion"]) >= 12
    assert {q["kind"] for q in before["QuizQuestion"]} == {"choice", "numeric"}
    links_before = quiz_question_lessons()
    assert all(links_before.values())

    first = tmp_path / "first" / "content"
    content_export(root=first, source=PROJECT_ROOT / "content")
    wipe()
    assert dump()["Lesson"] == []
    content_load(root=first)
    after = dump()
    for model in before:
        assert after[model] == before[model], model
    assert quiz_question_lessons() == links_before

    # export -> load -> export gives byte-identical files.
    second = tmp_path / "second" / "content"
    content_export(root=second, source=first)
    assert files_of(second) == files_of(first)


def test_an_edit_in_the_database_changes_only_its_file(content_tree):
    root = content_tree.root
    content_load(root=root)
    content_export(root=root, source=root)  # normalise the hand-written files
    before = files_of(root)

    lesson = Lesson.objects.get(slug="second-lesson")
    lesson.title = "Renamed in the admin"
    lesson.body = "Line one\r\nLine two\r\n"
    lesson.save()
    report = content_export(root=root, source=root)

    after = files_of(root)
    changed = {name for name in after if after[name] != before.get(name)}
    assert changed == {"01-basics/02-second-lesson.md"}
    assert report.written == ["01-basics/02-second-lesson.md"]
    text = after["01-basics/02-second-lesson.md"].decode()
    assert "title: Renamed in the admin\n" in text
    assert text.endswith("---\nLine one\nLine two\n")
    content_load(root=root)
    assert Lesson.objects.get(slug="second-lesson").body == "Line one\nLine two\n"


def test_a_lesson_deleted_in_the_admin_loses_its_file(content_tree):
    root = content_tree.root
    content_load(root=root)
    Lesson.objects.get(slug="third-lesson").delete()
    report = content_export(root=root, source=root)
    assert report.removed == ["02-advanced/01-third-lesson.md"]
    assert not (root / "02-advanced" / "01-third-lesson.md").exists()
    assert (root / "02-advanced" / "_section.md").exists()


def test_figure_scripts_and_other_files_are_copied_through(content_tree, tmp_path):
    script = "CAPTION = 'Bars'\n\ndef draw(fig):\n    fig.add_subplot().bar([1], [2])\n"
    content_tree.raw("figures/bars.py", script)
    content_tree.raw("README.txt", "notes\n")
    content_load(root=content_tree.root)
    target = tmp_path / "out" / "content"
    report = content_export(root=target, source=content_tree.root)
    assert (target / "figures" / "bars.py").read_text() == script
    assert (target / "README.txt").read_text() == "notes\n"
    assert sorted(report.copied) == ["README.txt", "figures/bars.py"]


def test_a_record_the_loader_would_reject_stops_the_whole_export(
    content_tree, tmp_path
):
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="first-lesson")
    # The admin allows a one-choice question; the file format does not.
    Question.objects.create(
        lesson=lesson,
        order=9,
        kind="choice",
        prompt="Only?",
        choices=["a"],
        correct_choice=0,
    )
    target = tmp_path / "out"
    with pytest.raises(ContentError) as caught:
        content_export(root=target, source=content_tree.root)
    message = str(caught.value)
    assert "01-basics/01-first-lesson.md" in message
    assert "at least two 'choices'" in message
    assert not target.exists()


def test_the_command_exports_and_explains_an_empty_database(content_tree, tmp_path):
    with pytest.raises(CommandError, match="no sections"):
        call_command("export_content", str(tmp_path / "empty"))
    content_load(root=content_tree.root)
    target = tmp_path / "cmd"
    from io import StringIO

    out = StringIO()
    call_command(
        "export_content", str(target), "--source", str(content_tree.root), stdout=out
    )
    assert "wrote    01-basics/_section.md" in out.getvalue()
    assert "Exported to" in out.getvalue()
    assert (target / "02-advanced" / "01-third-lesson.md").is_file()


def test_exercise_tolerance_options_survive_export_and_load(content_tree, tmp_path):
    source = PROJECT_ROOT / "content" / "exercises" / "softmax-temperature.yaml"
    text = "\n".join(
        line
        for line in source.read_text().splitlines()
        if not line.startswith("lesson:")
    )
    content_tree.raw("exercises/softmax-temperature.yaml", text + "\n")
    content_load(root=content_tree.root)
    Exercise.objects.filter(slug="softmax-temperature").update(
        options={"rtol": 0.001, "atol": 1e-06}
    )
    out = tmp_path / "exported"
    content_export(root=out, source=content_tree.root)
    assert "options:" in (out / "exercises" / "softmax-temperature.yaml").read_text()
    wipe()
    content_load(root=out)
    exercise = Exercise.objects.get(slug="softmax-temperature")
    assert exercise.options == {"rtol": 0.001, "atol": 1e-06}


def test_options_a_harness_cannot_use_are_refused_with_their_line(content_tree):
    source = PROJECT_ROOT / "content" / "exercises" / "kv-cache-bytes.yaml"
    content_tree.raw(
        "exercises/kv-cache-bytes.yaml",
        source.read_text() + "options:\n  rtol: 0.1\n",
    )
    with pytest.raises(ContentError) as info:
        content_load(root=content_tree.root)
    assert "unknown option 'rtol'" in str(info.value)
    assert not Exercise.objects.exists()


def test_an_authored_exercise_round_trips_and_a_bad_declaration_names_its_line(
    content_tree, tmp_path
):
    source = PROJECT_ROOT / "content" / "exercises" / "top-k-filter.yaml"
    text = source.read_text().replace("lesson: sampling-strategies\n", "")
    spec = yaml.safe_load(text)
    content_tree.raw("exercises/top-k-filter.yaml", text)
    content_load(root=content_tree.root)
    out = tmp_path / "out"
    content_export(root=out)
    written = yaml.safe_load((out / "exercises" / "top-k-filter.yaml").read_text())
    assert written["declaration"] == spec["declaration"]
    assert list(written["declaration"]) == ["inputs", "cases", "outputs"]
    assert list(written["declaration"]["cases"][0]) == ["name", "sizes"]

    Exercise.objects.all().delete()
    bad = text.replace("      sizes: {b: 2, k: 3, v: 10}", "      sizes: {b: 2, k: 3}")
    assert bad != text
    content_tree.raw("exercises/top-k-filter.yaml", bad)
    with pytest.raises(ContentError) as info:
        content_load(root=content_tree.root)
    line = 1 + text.splitlines().index("declaration:")
    assert (
        f"top-k-filter.yaml:{line}: declaration.cases[0].sizes: gives no size 'v'"
        in str(info.value)
    ), str(info.value)
    assert not Exercise.objects.exists()


def test_a_declaration_with_gpt2_inputs_a_generator_and_gradients_round_trips(
    content_tree, tmp_path
):
    """Every kind of input and output a declaration has, through a content
    file, the database and back, in the documented key order."""
    source = PROJECT_ROOT / "content" / "exercises" / "top-k-filter.yaml"
    spec = yaml.safe_load(source.read_text())
    del spec["lesson"]
    solution = (
        "import torch\n\n\ndef mlp_forward(mlp, config, x, w):\n"
        "    return mlp(x) * w, torch.nn.Linear(config.n_embd, 2)\n"
    )
    spec.update(
        slug="mlp-and-head",
        entry_point="mlp_forward",
        signature="mlp_forward(mlp, config, x, w) -> tuple[Tensor, Module]",
        starter="def mlp_forward(mlp, config, x, w):\n    ...\n",
        solution=solution,
        wrong_solutions=[],
        right_solutions=[],
        declaration={
            "inputs": [
                {"name": "mlp", "gpt2": "mlp", "config": {"n_embd": 16}},
                {"name": "config", "gpt2": "config", "config": {"n_embd": 16}},
                {"name": "x", "tensor": [1, "t", 16]},
                {"name": "w", "generated": True},
            ],
            "generator": "import torch\n\n\ndef make_inputs(sizes, generator):\n"
            "    return {'w': torch.rand(16, generator=generator)}\n",
            "cases": [{"name": "t=2", "sizes": {"t": 2}}],
            "outputs": [
                {"name": "y", "rtol": 0.001, "atol": 1e-05},
                {"name": "head", "parameters": True},
                {"name": "dx", "gradient_of": "x", "what": "dL/dx"},
            ],
        },
    )
    content_tree.raw("exercises/mlp-and-head.yaml", yaml.safe_dump(spec))
    content_load(root=content_tree.root)
    out = tmp_path / "out"
    content_export(root=out)
    written = yaml.safe_load((out / "exercises" / "mlp-and-head.yaml").read_text())
    assert written["declaration"] == spec["declaration"]
    assert list(written["declaration"]) == ["inputs", "generator", "cases", "outputs"]
    assert list(written["declaration"]["inputs"][0]) == ["name", "gpt2", "config"]
    assert list(written["declaration"]["outputs"][2]) == ["name", "gradient_of", "what"]
