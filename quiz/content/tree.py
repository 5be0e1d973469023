"""Parse and validate the content/ tree into plain records, touching no database.

Every problem is collected with its file and line so an author can fix them
all in one pass; nothing is written unless the whole tree is valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from quiz.content.exercise_store import exercise_store
from quiz.content.figures import FIGURE_DIR, figure_names, figure_path

# libyaml's loader where PyYAML was built with it: the same documents, about
# fifteen times faster than the pure-Python one (the content tree is ~130
# YAML documents, parsed on every load).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

SECTION_FILE = "_section.md"
EXERCISE_DIR = "exercises"
TEMPLATE_DIR = "quiz-templates"  # quiz.content.question_templates reads it
QUIZ_QUESTION_DIR = "quiz-questions"  # quiz.content.quiz_questions reads it
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass
class ContentProblem:
    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


class ContentError(Exception):
    """The content tree is invalid; `problems` lists each with file:line."""

    def __init__(self, problems: list[ContentProblem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class SectionRecord:
    path: Path
    slug: str
    order: int
    title: str
    description: str
    lines: dict[str, int] = field(default_factory=dict)


@dataclass
class LessonRecord:
    path: Path
    section: str
    order: int
    slug: str
    title: str
    question: str
    takeaway: str
    body: str
    tags: list[str]
    reading_time: int
    exercises: list[str]
    follow_ups: list[dict]
    questions: list[dict]
    lines: dict[str, int] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)


@dataclass
class ExerciseRecord:
    path: Path
    slug: str
    lesson: str | None
    title: str
    harness: str
    entry_point: str
    signature: str
    prompt: str
    starter: str
    solution: str
    wrong_solutions: list[dict]
    right_solutions: list[dict] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    declaration: dict = field(default_factory=dict)


@dataclass
class ContentTree:
    sections: list[SectionRecord] = field(default_factory=list)
    lessons: list[LessonRecord] = field(default_factory=list)
    exercises: list[ExerciseRecord] = field(default_factory=list)

    @property
    def files(self) -> list[Path]:
        items = [*self.sections, *self.lessons, *self.exercises]
        return [item.path for item in items]


class _Mapping:
    """A YAML mapping that remembers the line of each key, for messages."""

    def __init__(self, data: dict, lines: dict[str, int], path: Path, start: int):
        self.data, self.lines, self.path, self.start = data, lines, path, start

    def line(self, key: str) -> int:
        return self.lines.get(key, self.start)


def _load_yaml(
    text: str, path: Path, first_line: int, problems: list
) -> _Mapping | None:
    try:
        node = yaml.compose(text, Loader=_LOADER)
        data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = first_line + (mark.line if mark else 0)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        problems.append(ContentProblem(path, line, f"invalid YAML: {problem}"))
        return None
    if not isinstance(data, dict) or node is None:
        problems.append(ContentProblem(path, first_line, "expected a YAML mapping"))
        return None
    lines = {
        key.value: first_line + key.start_mark.line
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }
    return _Mapping(data, lines, path, first_line)


def _split_front_matter(path: Path, problems: list) -> tuple[str, str] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(ContentProblem(path, 1, f"not valid UTF-8 ({exc.reason})"))
        return None
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        problems.append(
            ContentProblem(
                path, 1, "missing YAML front matter (first line must be ---)"
            )
        )
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :]).strip() + "\n"
    problems.append(ContentProblem(path, 1, "front matter is not closed by a --- line"))
    return None


class _Fields:
    """Typed access to required and optional fields, recording problems."""

    def __init__(self, mapping: _Mapping, problems: list):
        self.m, self.problems = mapping, problems

    def _bad(self, key: str, reason: str) -> None:
        self.problems.append(ContentProblem(self.m.path, self.m.line(key), reason))

    def get(self, key: str, kind: type | tuple, *, required: bool = True, default=None):
        if key not in self.m.data or self.m.data[key] is None:
            if required:
                self._bad(key, f"missing required field '{key}'")
            return default
        value = self.m.data[key]
        if isinstance(value, bool) and kind is not bool:
            self._bad(key, f"field '{key}' must be {_kind_name(kind)}, got a boolean")
            return default
        if not isinstance(value, kind):
            self._bad(key, f"field '{key}' must be {_kind_name(kind)}, got {value!r}")
            return default
        if isinstance(value, str) and required and not value.strip():
            self._bad(key, f"field '{key}' is empty")
            return default
        return value

    def text(self, key: str, *, max_length: int) -> str | None:
        """A required text field that must fit its database column."""
        value = self.get(key, str)
        if value is not None and len(value) > max_length:
            self._bad(
                key, f"'{key}' is {len(value)} characters; the limit is {max_length}"
            )
            return None
        return value

    def slug(self, key: str, *, required: bool = True) -> str | None:
        value = self.get(key, str, required=required)
        if value is not None and (not _SLUG.match(value) or len(value) > 80):
            self._bad(
                key,
                f"'{key}' must be a lowercase slug like 'weight-tying', got {value!r}",
            )
            return None
        return value

    def positive_int(
        self, key: str, *, required: bool = True, default=None
    ) -> int | None:
        value = self.get(key, int, required=required, default=default)
        if value is not None and value < 1:
            self._bad(key, f"'{key}' must be a positive integer, got {value}")
            return None
        return value

    def string_list(self, key: str) -> list[str]:
        value = self.get(key, list, required=False, default=[])
        if not all(isinstance(item, str) for item in value):
            self._bad(key, f"'{key}' must be a list of strings")
            return []
        return value


def _kind_name(kind) -> str:
    names = {str: "text", int: "an integer", list: "a list", dict: "a mapping"}
    if isinstance(kind, tuple):
        return " or ".join(names.get(k, k.__name__) for k in kind)
    return names.get(kind, kind.__name__)


def _front_matter(path: Path, problems: list) -> tuple[_Mapping, str] | None:
    """A Markdown file's front matter as a mapping, and its body."""
    parts = _split_front_matter(path, problems)
    if parts is None:
        return None
    mapping = _load_yaml(parts[0], path, 2, problems)
    if mapping is None:
        return None
    return mapping, parts[1]


def _parse_section(path: Path, problems: list) -> SectionRecord | None:
    parsed = _front_matter(path, problems)
    if parsed is None:
        return None
    mapping, body = parsed
    f, before = _Fields(mapping, problems), len(problems)
    record = SectionRecord(
        path=path,
        slug=f.slug("slug"),
        order=f.positive_int("order"),
        title=f.text("title", max_length=200),
        description=body,
    )
    record.lines = mapping.lines
    return record if len(problems) == before else None


def _parse_follow_ups(f: _Fields) -> list[dict]:
    items = f.get("follow_ups", list, required=False, default=[])
    result = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) and item.get(k).strip()
            for k in ("question", "answer")
        ):
            f._bad(
                "follow_ups", f"follow-up {number} needs text 'question' and 'answer'"
            )
            continue
        result.append(
            {"question": item["question"].strip(), "answer": item["answer"].strip()}
        )
    return result


def _parse_questions(f: _Fields) -> list[dict]:
    items = f.get("questions", list, required=False, default=[])
    result = []
    for number, item in enumerate(items, start=1):
        reason = question_problem(item)
        if reason:
            f._bad("questions", f"question {number}: {reason}")
            continue
        result.append(item)
    return result


def question_problem(item) -> str | None:
    if not isinstance(item, dict):
        return "must be a mapping with kind, prompt, answer"
    kind = item.get("kind")
    if kind not in ("choice", "numeric", "recall"):
        return f"kind must be choice, numeric or recall, got {kind!r}"
    if not isinstance(item.get("prompt"), str) or not item["prompt"].strip():
        return "missing 'prompt'"
    answer = item.get("answer")
    if kind == "choice":
        choices = item.get("choices")
        if not isinstance(choices, list) or len(choices) < 2:
            return "a choice question needs at least two 'choices'"
        if not isinstance(answer, int) or isinstance(answer, bool):
            return "'answer' must be the 0-based index of the right choice"
        if not 0 <= answer < len(choices):
            return f"'answer' {answer} is not an index into {len(choices)} choices"
    elif kind == "numeric":
        if not isinstance(answer, (int, float)) or isinstance(answer, bool):
            return "'answer' must be a number"
        tolerance = item.get("tolerance", 0)
        if not isinstance(tolerance, (int, float)) or tolerance < 0:
            return "'tolerance' must be a non-negative number"
    elif not isinstance(answer, str) or not answer.strip():
        return "a recall question needs a model 'answer' text"
    return None


def _parse_lesson(path: Path, problems: list) -> LessonRecord | None:
    parsed = _front_matter(path, problems)
    if parsed is None:
        return None
    mapping, body = parsed
    f, before = _Fields(mapping, problems), len(problems)
    if not body.strip():
        problems.append(ContentProblem(path, 1, "the lesson has no answer body"))
    record = LessonRecord(
        path=path,
        section=f.slug("section"),
        order=f.positive_int("order"),
        slug=f.slug("slug"),
        title=f.text("title", max_length=200),
        question=f.get("question", str),
        takeaway=f.get("takeaway", str, required=False, default=""),
        body=body,
        tags=f.string_list("tags"),
        reading_time=f.positive_int("reading_time", required=False, default=5),
        exercises=f.string_list("exercises"),
        follow_ups=_parse_follow_ups(f),
        questions=_parse_questions(f),
    )
    record.lines = mapping.lines
    record.figures = figure_names(body)
    return record if len(problems) == before else None


def _parse_exercise(path: Path, problems: list) -> ExerciseRecord | None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(ContentProblem(path, 1, f"not valid UTF-8 ({exc.reason})"))
        return None
    mapping = _load_yaml(text, path, 1, problems)
    if mapping is None:
        return None
    f, before = _Fields(mapping, problems), len(problems)
    wrong = f.get("wrong_solutions", list, required=False, default=[])
    if not all(isinstance(w, dict) and isinstance(w.get("code"), str) for w in wrong):
        f._bad("wrong_solutions", "each wrong solution needs 'name' and 'code'")
        wrong = []
    right = f.get("right_solutions", list, required=False, default=[])
    if not all(isinstance(r, dict) and isinstance(r.get("code"), str) for r in right):
        f._bad("right_solutions", "each right solution needs 'name' and 'code'")
        right = []
    entry_point = f.get("entry_point", str)
    if entry_point is not None and not entry_point.isidentifier():
        f._bad(
            "entry_point", f"'entry_point' must be a Python name, got {entry_point!r}"
        )
    record = ExerciseRecord(
        path=path,
        slug=f.slug("slug"),
        lesson=f.slug("lesson", required=False),
        title=f.text("title", max_length=200),
        harness=f.slug("harness"),
        entry_point=entry_point,
        signature=f.text("signature", max_length=300),
        prompt=f.get("prompt", str),
        starter=f.get("starter", str),
        solution=f.get("solution", str),
        wrong_solutions=wrong,
        right_solutions=right,
        options=f.get("options", dict, required=False, default={}),
        declaration=f.get("declaration", dict, required=False, default={}),
    )
    if record.options and record.harness:
        for reason in exercise_store().options_problems(  # imports the harness
            harness=record.harness, options=record.options
        ):
            f._bad("options", reason)
    if record.harness and len(problems) == before:
        for key, reason in exercise_store().declaration_problems(record=record):
            f._bad(key, reason)
    record.lines = mapping.lines
    return record if len(problems) == before else None


def read_content_tree(root: Path) -> ContentTree:
    """Parse every file under `root`; raise ContentError listing all problems."""
    root = Path(root)
    if not root.is_dir():
        raise ContentError([ContentProblem(root, 0, "content folder not found")])
    problems: list[ContentProblem] = []
    tree = ContentTree()
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name in (FIGURE_DIR, TEMPLATE_DIR, QUIZ_QUESTION_DIR):
            continue  # scripts, checked when a lesson references them
        if folder.name == EXERCISE_DIR:
            for path in sorted(folder.glob("*.yaml")):
                tree.exercises.append(_parse_exercise(path, problems))
            continue
        section_file = folder / SECTION_FILE
        if not section_file.exists():
            problems.append(
                ContentProblem(folder, 0, f"section folder has no {SECTION_FILE}")
            )
        else:
            tree.sections.append(_parse_section(section_file, problems))
        for path in sorted(folder.glob("*.md")):
            if path.name != SECTION_FILE:
                tree.lessons.append(_parse_lesson(path, problems))
    tree.sections = [s for s in tree.sections if s]
    tree.lessons = [les for les in tree.lessons if les]
    tree.exercises = [e for e in tree.exercises if e]
    problems.extend(_cross_check(tree))
    problems.extend(_missing_figures(tree, root))
    if problems:
        raise ContentError(problems)
    _link_exercises(tree)
    return tree


def _missing_figures(tree: ContentTree, root: Path) -> list[ContentProblem]:
    problems = []
    for lesson in tree.lessons:
        for name in lesson.figures:
            if not figure_path(root, name).is_file():
                text = lesson.path.read_text(encoding="utf-8")
                line = text[: text.find(f"(figure:{name})")].count("\n") + 1
                problems.append(
                    ContentProblem(
                        lesson.path,
                        line,
                        f"figure {name!r} has no script {FIGURE_DIR}/{name}.py",
                    )
                )
    return problems


def _link_exercises(tree: ContentTree) -> None:
    """An exercise listed by a lesson belongs to it (its file may say so too)."""
    listed_by = {slug: les.slug for les in tree.lessons for slug in les.exercises}
    for exercise in tree.exercises:
        exercise.lesson = exercise.lesson or listed_by.get(exercise.slug)


def _duplicates(items, key, what: str, field_name: str) -> list[ContentProblem]:
    seen: dict = {}
    problems = []
    for item in items:
        value = getattr(item, key) if isinstance(key, str) else key(item)
        if value in seen:
            problems.append(
                ContentProblem(
                    item.path,
                    item.lines.get(field_name, 1),
                    f"duplicate {what} {value!r} (also in {seen[value]})",
                )
            )
        else:
            seen[value] = item.path
    return problems


def _cross_check(tree: ContentTree) -> list[ContentProblem]:
    """Duplicates and dangling references across the tree's files."""
    return [
        *_duplicate_problems(tree),
        *_lesson_reference_problems(tree),
        *_exercise_owner_problems(tree),
    ]


def _duplicate_problems(tree: ContentTree) -> list[ContentProblem]:
    problems = _duplicates(tree.sections, "slug", "section slug", "slug")
    problems += _duplicates(tree.sections, "order", "section order", "order")
    problems += _duplicates(tree.lessons, "slug", "lesson slug", "slug")
    problems += _duplicates(
        tree.lessons,
        lambda les: (les.section, les.order),
        "lesson (section, order)",
        "order",
    )
    problems += _duplicates(tree.exercises, "slug", "exercise slug", "slug")
    return problems


def _lesson_reference_problems(tree: ContentTree) -> list[ContentProblem]:
    """A lesson's section and exercises must exist."""
    problems = []
    sections = {s.slug for s in tree.sections}
    exercises = {e.slug for e in tree.exercises}
    for lesson in tree.lessons:
        if lesson.section not in sections:
            known = ", ".join(sorted(sections)) or "none"
            problems.append(
                ContentProblem(
                    lesson.path,
                    lesson.lines.get("section", 1),
                    f"unknown section {lesson.section!r} (known: {known})",
                )
            )
        for slug in lesson.exercises:
            if slug not in exercises:
                problems.append(
                    ContentProblem(
                        lesson.path,
                        lesson.lines.get("exercises", 1),
                        f"unknown exercise {slug!r}",
                    )
                )
    return problems


def _exercise_owner_problems(tree: ContentTree) -> list[ContentProblem]:
    """An exercise belongs to one lesson, which exists and agrees with its file."""
    problems = []
    lessons = {les.slug for les in tree.lessons}
    listed_by: dict[str, LessonRecord] = {}
    for lesson in tree.lessons:
        for slug in lesson.exercises:
            if slug in listed_by:
                problems.append(
                    ContentProblem(
                        lesson.path,
                        lesson.lines.get("exercises", 1),
                        f"exercise {slug!r} is already listed by "
                        f"{listed_by[slug].path}: an exercise belongs to one lesson",
                    )
                )
            listed_by.setdefault(slug, lesson)
    for exercise in tree.exercises:
        owner = listed_by.get(exercise.slug)
        if exercise.lesson and owner and owner.slug != exercise.lesson:
            problems.append(
                ContentProblem(
                    exercise.path,
                    exercise.lines.get("lesson", 1),
                    f"lesson {exercise.lesson!r} here, but {owner.path} lists "
                    "this exercise",
                )
            )
        if exercise.lesson and exercise.lesson not in lessons:
            problems.append(
                ContentProblem(
                    exercise.path,
                    exercise.lines.get("lesson", 1),
                    f"unknown lesson {exercise.lesson!r}",
                )
            )
    return problems
