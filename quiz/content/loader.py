"""Load the content/ tree into the database, all or nothing (reads: selectors.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.db import IntegrityError, transaction
from django.db.models import F

from quiz.content.diagnoses import DiagnosesInvalid, diagnosis_load
from quiz.content.exercise_store import exercise_store
from quiz.content.figures import FigureError, figure_path, figure_render
from quiz.content.models import Diagnosis, Figure, FollowUp, Lesson, Question, Section
from quiz.content.question_templates import load_templates, read_templates
from quiz.content.quiz_questions import (
    load_quiz_questions,
    quiz_questions_not_in,
    read_quiz_questions,
)
from quiz.content.tree import (
    ContentError,
    ContentProblem,
    ContentTree,
    LessonRecord,
    read_content_tree,
)
from quiz.core.upsert import apply_values, upsert

# Orders are shifted out of the way first so reordering never trips the
# unique (section, order) constraint halfway through a load.
_ORDER_SHIFT = 10_000
DIAGNOSES_FILE = "diagnoses.yaml"


@dataclass
class LoadReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    missing_from_files: list[str] = field(default_factory=list)
    # Quiz-only questions no file describes: left in place (quizzes may
    # refer to them), as lessons and templates are.
    quiz_questions_missing_from_files: list[str] = field(default_factory=list)


def _sync_children(lesson: Lesson, model, rows: list[dict]) -> bool:
    """Make the lesson's follow-ups or questions equal `rows`, matched by order.

    Rows are updated in place (not deleted and re-created) so learners'
    answers that point at a question survive an edit of its wording.
    """
    existing = {obj.order: obj for obj in model.objects.filter(lesson=lesson)}
    changed = False
    for order, values in enumerate(rows):
        obj = existing.pop(order, None)
        if obj is None:
            model.objects.create(lesson=lesson, order=order, **values)
            changed = True
        elif apply_values(obj, values):
            obj.save()
            changed = True
    if existing:
        model.objects.filter(pk__in=[o.pk for o in existing.values()]).delete()
        changed = True
    return changed


def _question_values(item: dict) -> dict:
    kind = item["kind"]
    return {
        "kind": kind,
        "prompt": item["prompt"].strip(),
        "choices": [str(c) for c in item.get("choices", [])]
        if kind == "choice"
        else [],
        "correct_choice": item["answer"] if kind == "choice" else None,
        "numeric_answer": float(item["answer"]) if kind == "numeric" else None,
        "tolerance": float(item.get("tolerance", 0)) if kind == "numeric" else 0,
        "model_answer": item["answer"].strip() if kind == "recall" else "",
        "explanation": str(item.get("explanation", "")).strip(),
    }


def _lesson_values(record: LessonRecord, section: Section, root: Path) -> dict:
    return {
        "section": section,
        "order": record.order,
        "title": record.title.strip(),
        "question": record.question.strip(),
        "takeaway": record.takeaway.strip(),
        "body": record.body,
        "tags": record.tags,
        "reading_time": record.reading_time,
        "source_path": _relative(record.path, root),
    }


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root.parent))
    except ValueError:
        return str(path)


def content_load(
    *,
    root: Path,
    progress: Callable[[int, int, str, str], None] | None = None,
    figures: bool = True,
) -> LoadReport:
    """Load the content tree into the database, all or nothing.

    Idempotent: a second run reports everything unchanged. Lessons and
    quiz-only questions in the database that no file describes any more are
    reported, never deleted (templates are left in place too): a quiz's
    attempts may have drawn them.
    `figures=False` leaves the figures out (neither drawn nor stored: the
    lessons show none until a full load), for a server that needs the
    exercises and lessons but never a lesson page, such as the learner
    client's test server.
    """
    root = Path(root)
    tree = read_content_tree(root)
    templates = read_templates(root)
    quiz_questions = read_quiz_questions(root)
    # The slow part (drawing every figure), outside the transaction.
    figures = _render_figures(tree, root) if figures else {}
    report = LoadReport()
    diagnoses = root / DIAGNOSES_FILE
    total = (
        len(tree.files)
        + len(figures)
        + diagnoses.is_file()
        + len(templates)
        + len(quiz_questions)
    )
    step = 0

    def note(kind: str, label: str, outcome: str) -> None:
        nonlocal step
        step += 1
        getattr(report, outcome).append(f"{kind} {label}")
        if progress:
            progress(step, total, label, outcome)

    try:
        with transaction.atomic():
            _load_tree(tree, root, note)
            _load_figures(figures, note)
            if diagnoses.is_file():
                outcome = _load_diagnoses(diagnoses)
                note("diagnoses", DIAGNOSES_FILE, outcome)
            load_templates(templates, lambda path: _relative(path, root), note)
            load_quiz_questions(
                quiz_questions, lambda path: _relative(path, root), note
            )
    except DiagnosesInvalid as exc:
        raise ContentError(
            [
                ContentProblem(root / DIAGNOSES_FILE, 0, line)
                for line in str(exc).splitlines()
            ]
        ) from exc
    except IntegrityError as exc:
        raise ContentError(
            [
                ContentProblem(
                    root, 0, f"conflicts with records edited in the admin: {exc}"
                )
            ]
        ) from exc
    file_slugs = {lesson.slug for lesson in tree.lessons}
    report.missing_from_files = list(
        Lesson.objects.exclude(slug__in=file_slugs).values_list("slug", flat=True)
    )
    report.quiz_questions_missing_from_files = quiz_questions_not_in(quiz_questions)
    return report


def _render_figures(tree: ContentTree, root: Path) -> dict[str, tuple[str, str, str]]:
    """Render every referenced figure: {name: (svg, caption, hash)}, or fail."""
    names = list(dict.fromkeys(n for lesson in tree.lessons for n in lesson.figures))
    rendered, problems = {}, []
    for name in names:
        try:
            rendered[name] = figure_render(figure_path(root, name))
        except FigureError as exc:
            problems.append(ContentProblem(figure_path(root, name), 0, str(exc)))
    if problems:
        raise ContentError(problems)
    return rendered


def _load_figures(figures: dict[str, tuple[str, str, str]], note) -> None:
    for name, (svg, caption, digest) in figures.items():
        outcome = upsert(
            Figure,
            {"name": name},
            {"svg": svg, "caption": caption[:300], "source_hash": digest},
        )
        note("figure", name, outcome)


def _diagnosis_rows() -> set[tuple]:
    rows = Diagnosis.objects.prefetch_related("lessons")
    return {
        (d.slug, d.summary, tuple(sorted(le.slug for le in d.lessons.all())))
        for d in rows
    }


def _load_diagnoses(path: Path) -> str:
    """Load the misconception -> lessons map; report whether it changed."""
    before = _diagnosis_rows()
    diagnosis_load(path=path)
    after = _diagnosis_rows()
    if not before:
        return "created"
    return "unchanged" if after == before else "updated"


def _move_out_of_the_way(tree: ContentTree) -> None:
    """Shift rows whose order changes so swaps never hit the unique constraints."""
    wanted = {s.slug: s.order for s in tree.sections}
    moving = [
        slug
        for slug, order in Section.objects.filter(slug__in=wanted).values_list(
            "slug", "order"
        )
        if wanted[slug] != order
    ]
    Section.objects.filter(slug__in=moving).update(order=F("order") + _ORDER_SHIFT)
    wanted = {les.slug: (les.section, les.order) for les in tree.lessons}
    rows = Lesson.objects.filter(slug__in=wanted).values_list(
        "slug", "section__slug", "order"
    )
    moving = [slug for slug, section, order in rows if wanted[slug] != (section, order)]
    Lesson.objects.filter(slug__in=moving).update(order=F("order") + _ORDER_SHIFT)


def _load_tree(tree: ContentTree, root: Path, note) -> None:
    _move_out_of_the_way(tree)
    sections = {}
    for record in tree.sections:
        outcome = upsert(
            Section,
            {"slug": record.slug},
            {
                "order": record.order,
                "title": record.title.strip(),
                "description": record.description,
            },
        )
        sections[record.slug] = Section.objects.get(slug=record.slug)
        note("section", _relative(record.path, root), outcome)
    for record in tree.lessons:
        outcome = upsert(
            Lesson,
            {"slug": record.slug},
            _lesson_values(record, sections[record.section], root),
        )
        lesson = Lesson.objects.get(slug=record.slug)
        follow_ups = [
            {"question": f["question"], "answer": f["answer"]}
            for f in record.follow_ups
        ]
        children_changed = _sync_children(lesson, FollowUp, follow_ups)
        children_changed |= _sync_children(
            lesson, Question, [_question_values(q) for q in record.questions]
        )
        if outcome == "unchanged" and children_changed:
            outcome = "updated"
        note("lesson", _relative(record.path, root), outcome)
    for record in tree.exercises:
        outcome = exercise_store().upsert(
            record=record, source_path=_relative(record.path, root)
        )
        note("exercise", _relative(record.path, root), outcome)
