"""Write the database's course content back to content/ files.

The inverse of quiz.content.loader.content_load, in the format of
docs/content-format.md: load, export, load gives the same database, and
export, load, export gives byte-identical files. So an edit made in the admin
can be committed to git like one made in an editor.

The export is all or nothing: the whole tree is written to a scratch folder
and parsed back with the loader's own parser before any file in the target
changes. Files the export does not generate (figure scripts, anything else)
are copied through unchanged.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from quiz.content.exercise_store import exercise_store
from quiz.content.models import Lesson, Section
from quiz.content.question_templates import TEMPLATE_DIR, template_export_files
from quiz.content.quiz_questions import (
    QUIZ_QUESTION_DIR,
    export_specs,
    read_quiz_questions,
)
from quiz.content.tree import (
    EXERCISE_DIR,
    SECTION_FILE,
    ContentError,
    ContentProblem,
    ExerciseRecord,
    read_content_tree,
)

YAML_WIDTH = 88
FOLD_AFTER = 100
_WRONG_SOLUTION_KEYS = ("name", "diagnosis", "code")
# An authored exercise's declaration, in the order docs/content-format.md
# writes it (sizes and other free-form maps keep their own keys, sorted).
_DECLARATION_KEYS = (
    "inputs", "generator", "cases", "outputs", "name", "hidden", "tensor",
    "int", "float", "arange", "start", "gpt2", "config", "generated", "dtype",
    "range", "scale", "sizes", "rtol", "atol", "exact", "parameters",
    "gradient_of", "axes", "what",
)  # fmt: skip


class ExportError(Exception):
    """Nothing was exported; the message says why."""


@dataclass
class ExportReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)


class _Flow(list):
    """A short list of words written inline: `tags: [a, b]`."""


class _FlowMap(dict):
    """A small mapping written inline: `tolerance: {absolute: 0.5}`."""


class _Dumper(yaml.SafeDumper):
    """Readable YAML: multi-line text as `|` blocks, short lists inline."""

    def increase_indent(self, flow=False, indentless=False):
        # Indent list items under their key, like the hand-written files.
        return super().increase_indent(flow, False)


def _represent_str(dumper, value: str):
    # Prose wraps like the hand-written files: a literal block keeps its
    # lines, a long one-line text is folded (`>-`). PyYAML falls back to a
    # quoted style whenever a block cannot hold the exact text.
    style = None
    if "\n" in value:
        style = "|"
    elif len(value) > FOLD_AFTER:
        style = ">"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_flow(dumper, value: _Flow):
    return dumper.represent_sequence(
        "tag:yaml.org,2002:seq", list(value), flow_style=True
    )


def _represent_flow_map(dumper, value: _FlowMap):
    return dumper.represent_mapping(
        "tag:yaml.org,2002:map", dict(value), flow_style=True
    )


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_Flow, _represent_flow)
_Dumper.add_representer(_FlowMap, _represent_flow_map)


def _yaml(data: dict) -> str:
    return yaml.dump(
        data,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=YAML_WIDTH,
        default_flow_style=False,
    )


def _text(value: str) -> str:
    """Text as the files keep it: \\n line endings."""
    return (value or "").replace("\r\n", "\n").replace("\r", "\n")


def _body(value: str) -> str:
    """A Markdown body ends with exactly one newline, as the loader stores it."""
    text = _text(value).strip()
    return text + "\n" if text else ""


def _stripped(value: str) -> str:
    """Text the loader strips: multi-line ends with a newline, so it reads as `|`."""
    text = _text(value).strip()
    return text + "\n" if "\n" in text else text


def _number(value: float) -> int | float:
    # 7087872.0 reads better as 7087872; the loader turns it back into a float.
    if float(value).is_integer() and abs(value) < 2**53:
        return int(value)
    return float(value)


def _front_matter_file(meta: dict, body: str) -> str:
    return "---\n" + _yaml(meta) + "---\n" + body


def _section_file(section: Section) -> str:
    meta = {"slug": section.slug, "order": section.order, "title": section.title}
    return _front_matter_file(meta, _body(section.description))


def _question_item(question) -> dict:
    item = {"kind": question.kind, "prompt": _stripped(question.prompt)}
    if question.kind == "choice":
        item["choices"] = _choices(question.choices)
        item["answer"] = question.correct_choice
    elif question.kind == "numeric":
        item["answer"] = _number(question.numeric_answer)
        item["tolerance"] = _number(question.tolerance)
    else:
        item["answer"] = _stripped(question.model_answer)
    explanation = _stripped(question.explanation)
    if explanation:
        item["explanation"] = explanation
    return item


def _choices(choices: list[str]) -> list[str]:
    """Short one-line options inline, like the hand-written files."""
    texts = [_text(str(choice)) for choice in choices]
    short = sum(len(c) + 4 for c in texts) < 72 and all("\n" not in c for c in texts)
    return _Flow(texts) if short else texts


def _quiz_question_file(spec: dict) -> str:
    """A quiz-only question's file from its checked mapping (quiz_questions.py)."""
    data = dict(spec)
    if "lessons" in data:
        data["lessons"] = _Flow(data["lessons"])
    if "choices" in data:
        data["choices"] = _choices(data["choices"])
    if "tolerance" in data:
        data["tolerance"] = _FlowMap(data["tolerance"])
    for key in ("prompt", "explanation"):
        if key in data:
            data[key] = _stripped(data[key])
    if "misconceptions" in data:
        data["misconceptions"] = [
            {k: _stripped(v) if k == "says" else v for k, v in m.items()}
            for m in data["misconceptions"]
        ]
    return _yaml(data)


def _lesson_file(lesson: Lesson, exercises: list[str]) -> str:
    meta = {
        "section": lesson.section.slug,
        "order": lesson.order,
        "slug": lesson.slug,
        "title": _text(lesson.title).strip(),
        "question": _stripped(lesson.question),
        "tags": _Flow(str(tag) for tag in lesson.tags or []),
        "reading_time": lesson.reading_time,
    }
    takeaway = _stripped(lesson.takeaway)
    if takeaway:
        meta["takeaway"] = takeaway
    meta["exercises"] = _Flow(exercises)
    meta["follow_ups"] = [
        {
            "question": _stripped(item.question),
            "answer": _stripped(item.answer),
        }
        for item in lesson.follow_ups.all()
    ]
    meta["questions"] = [_question_item(item) for item in lesson.questions.all()]
    return _front_matter_file(meta, _body(lesson.body))


def _wrong_solution(item: dict) -> dict:
    """A known solution, wrong or right, with its keys in the documented order."""
    # PostgreSQL's jsonb forgets key order; write the documented order back.
    known = {key: _text(item[key]) for key in _WRONG_SOLUTION_KEYS if key in item}
    rest = {key: item[key] for key in sorted(item) if key not in known}
    return {**known, **rest}


def _exercise_file(exercise: ExerciseRecord) -> str:
    data = {"slug": exercise.slug}
    if exercise.lesson:
        data["lesson"] = exercise.lesson
    data.update(
        {
            "title": _text(exercise.title).strip(),
            "harness": exercise.harness,
            "entry_point": exercise.entry_point,
            "signature": _text(exercise.signature).strip(),
            "prompt": _text(exercise.prompt),
            "starter": _text(exercise.starter),
            "solution": _text(exercise.solution),
        }
    )
    if exercise.wrong_solutions:
        data["wrong_solutions"] = [_wrong_solution(w) for w in exercise.wrong_solutions]
    if exercise.right_solutions:
        data["right_solutions"] = [_wrong_solution(r) for r in exercise.right_solutions]
    if exercise.options:
        data["options"] = exercise.options
    if exercise.declaration:
        data["declaration"] = _ordered(exercise.declaration, _DECLARATION_KEYS)
    return _yaml(data)


def _ordered(value, order: tuple[str, ...]):
    """`value` with every mapping's keys in the documented order, the rest
    sorted after them (PostgreSQL's jsonb forgets the order written)."""
    if isinstance(value, list):
        return [_ordered(item, order) for item in value]
    if not isinstance(value, dict):
        return value
    rank = {key: index for index, key in enumerate(order)}
    keys = sorted(value, key=lambda key: (rank.get(key, len(order)), str(key)))
    return {key: _ordered(value[key], order) for key in keys}


def _lesson_filename(lesson: Lesson, taken: set[str]) -> str:
    """Keep the file name the lesson was loaded from, so git sees an edit."""
    name = PurePosixPath(lesson.source_path.replace("\\", "/")).name
    if not name.endswith(".md") or name == SECTION_FILE or name in taken:
        name = f"{lesson.order:02d}-{lesson.slug}.md"
    return name


def section_folder(section: Section) -> str:
    return f"{section.order:02d}-{section.slug}"


def content_export_files() -> dict[str, str]:
    """Every generated file of the tree: {relative path: text}."""
    files: dict[str, str] = {}
    exercises = exercise_store().records()
    listed: dict[str, list[str]] = {}
    for exercise in exercises:
        if exercise.lesson:
            listed.setdefault(exercise.lesson, []).append(exercise.slug)
    lessons = (
        Lesson.objects.select_related("section")
        .prefetch_related("follow_ups", "questions")
        .order_by("section__order", "order")
    )
    by_section: dict[int, list[Lesson]] = {}
    for lesson in lessons:
        by_section.setdefault(lesson.section_id, []).append(lesson)
    for section in Section.objects.order_by("order"):
        folder = section_folder(section)
        files[f"{folder}/{SECTION_FILE}"] = _section_file(section)
        taken: set[str] = set()
        for lesson in by_section.get(section.pk, []):
            name = _lesson_filename(lesson, taken)
            taken.add(name)
            files[f"{folder}/{name}"] = _lesson_file(
                lesson, listed.get(lesson.slug, [])
            )
    for exercise in exercises:
        files[f"{EXERCISE_DIR}/{exercise.slug}.yaml"] = _exercise_file(exercise)
    files.update(template_export_files())
    for relative, spec in export_specs().items():
        files[relative] = _quiz_question_file(spec)
    return files


def _is_generated(root: Path, relative: PurePosixPath) -> bool:
    """Is `relative` a file the export owns (and may overwrite or remove)?"""
    parts = relative.parts
    if len(parts) != 2:
        return False
    if parts[0] in (EXERCISE_DIR, TEMPLATE_DIR, QUIZ_QUESTION_DIR):
        return relative.suffix == ".yaml"
    return relative.suffix == ".md" and (root / parts[0] / SECTION_FILE).is_file()


def _tree_files(root: Path) -> list[PurePosixPath]:
    if not root.is_dir():
        return []
    return sorted(
        PurePosixPath(path.relative_to(root).as_posix())
        for path in root.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


def _passthrough(source: Path | None) -> dict[str, bytes]:
    """Files under `source` the export does not generate, e.g. figures/*.py."""
    if source is None:
        return {}
    return {
        str(relative): (source / relative).read_bytes()
        for relative in _tree_files(source)
        if not _is_generated(source, relative)
    }


def _validate(files: dict[str, bytes]) -> None:
    """Parse the would-be tree with the loader's parser; raise if it rejects it."""
    with tempfile.TemporaryDirectory(prefix="export-check-") as scratch:
        root = Path(scratch) / "content"
        for relative, data in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        root.mkdir(exist_ok=True)
        try:
            read_content_tree(root)
            read_quiz_questions(root)
        except ContentError as exc:
            problems = [
                ContentProblem(_relative_to(p.path, root), p.line, p.reason)
                for p in exc.problems
            ]
            raise ContentError(problems) from None


def _relative_to(path: Path, root: Path) -> Path:
    try:
        return Path(path).relative_to(root)
    except ValueError:
        return Path(path)


def content_export(*, root: Path, source: Path | None = None) -> ExportReport:
    """Make the content files under `root` describe the database.

    Generated files that no record describes any more are removed, so a
    lesson deleted in the admin does not come back on the next load. Files
    from `source` that the export does not generate are copied when `root`
    is another folder.
    """
    root = Path(root).resolve()
    if not Section.objects.exists():
        raise ExportError(
            "the database has no sections: load or author content before exporting"
        )
    generated = {
        path: text.encode("utf-8") for path, text in content_export_files().items()
    }
    same_folder = source is not None and Path(source).resolve() == root
    copied = {} if same_folder else _passthrough(source and Path(source))
    kept = _passthrough(root) if root.is_dir() else {}
    _validate({**kept, **copied, **generated})

    report = ExportReport()
    stale = [
        str(relative)
        for relative in _tree_files(root)
        if _is_generated(root, relative) and str(relative) not in generated
    ]
    for relative, data in {**copied, **generated}.items():
        path = root / relative
        if path.is_file() and path.read_bytes() == data:
            report.unchanged.append(relative)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        (report.written if relative in generated else report.copied).append(relative)
    for relative in stale:
        (root / relative).unlink()
        report.removed.append(relative)
        folder = (root / relative).parent
        if folder != root and not any(folder.iterdir()):
            shutil.rmtree(folder)
    return report
