"""Quiz-only questions: content/quiz-questions/<slug>.yaml <-> QuizQuestion.

A lesson's self-check answers at once, so its key is public; a quiz whose
feedback is held back also draws from these, which no lesson page,
self-check, review card or learner export shows.

The split mirrors question_templates.py: `check` holds a file's mapping to
the format (the loader before its transaction, and the admin's form, call
the same function), `load_quiz_questions` stores the files through
bank_loading (as templates are stored: the sections, lessons and diagnoses
a file names are checked inside the transaction; the admin checks its
diagnoses with `missing_diagnoses`), and
`export_specs` gives each stored question back as the mapping its file
holds (export.py writes it).

A file removed from content/ leaves its question in the database, as a
removed template or lesson does: quizzes and their attempts refer to it as
"b:<slug>" (a deleted question scores 0 in every attempt that drew it), and
this layer cannot see them. load_content names it; an admin deletes it.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from pathlib import Path

import yaml
from grading_engine.quiz_bank.numbers import within

from quiz.content.bank_loading import bank_rows_load
from quiz.content.models import Diagnosis, QuizQuestion
from quiz.content.tree import QUIZ_QUESTION_DIR, ContentError, ContentProblem

KINDS = ("choice", "numeric")
# The keys of a file, in the order export writes them.
KEYS = (
    "slug",
    "title",
    "section",
    "lessons",
    "kind",
    "prompt",
    "choices",
    "answer",
    "tolerance",
    "explanation",
    "misconceptions",
)
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TITLE_MAX = QuizQuestion._meta.get_field("title").max_length
_SLUG_MAX = QuizQuestion._meta.get_field("slug").max_length
# A FloatField holds integers exactly up to 2**53.
_EXACT_MAX = 2**53
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class QuizQuestionInvalid(ValueError):
    """A quiz-only question that cannot be stored; the message says what to fix.

    `key` is the file's key it is about (for the line number), if one.
    """

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


# Checking -------------------------------------------------------------------


def _slug(value, key: str) -> str:
    if not isinstance(value, str) or not _SLUG.match(value) or len(value) > _SLUG_MAX:
        raise QuizQuestionInvalid(
            f"{key} must be a lowercase slug like 'kv-cache-grows-with', got {value!r}",
            key,
        )
    return value


def _text(value, key: str, *, required: bool = True, limit: int = 0) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise QuizQuestionInvalid(f"{key} must be text and is required", key)
    text = value.replace("\r\n", "\n").replace("\r", "\n").strip()
    if limit and len(text) > limit:
        raise QuizQuestionInvalid(
            f"{key} is {len(text)} characters; the limit is {limit}", key
        )
    return text


def _number(value, what: str, key: str):
    """A finite number the database stores exactly (ints up to 2**53)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuizQuestionInvalid(f"{what} must be a number, got {value!r}", key)
    if not math.isfinite(value):
        raise QuizQuestionInvalid(f"{what} must be finite, got {value!r}", key)
    if isinstance(value, int) and abs(value) > _EXACT_MAX:
        raise QuizQuestionInvalid(
            f"{what} {value} is too large to store exactly; write it as a "
            "float (1.5e20) and give a relative tolerance",
            key,
        )
    if isinstance(value, float) and value.is_integer() and abs(value) < _EXACT_MAX:
        return int(value)  # 7087872.0 is 7087872, as export writes it
    return value


def _index(value, count: int, what: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise QuizQuestionInvalid(
            f"{what} must be the 0-based index of an option, got {value!r}", key
        )
    if not 0 <= value < count:
        raise QuizQuestionInvalid(
            f"{what} {value} is not an index into the {count} choices "
            f"(0 to {count - 1})",
            key,
        )
    return value


def _choices(value) -> list[str]:
    if not isinstance(value, list) or len(value) < 2:
        raise QuizQuestionInvalid(
            "a choice question needs a list of at least 2 choices", "choices"
        )
    choices = []
    for n, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise QuizQuestionInvalid(
                f"choice {n} must be text, got {item!r}", "choices"
            )
        text = str(item).strip()
        if not text:
            raise QuizQuestionInvalid(f"choice {n} is empty", "choices")
        if text in choices:
            raise QuizQuestionInvalid(
                f"choices {choices.index(text)} and {n} are the same text, "
                f"{text!r}: every option must differ",
                "choices",
            )
        choices.append(text)
    return choices


def _tolerance(value) -> dict:
    """{absolute: x} and/or {relative: y}, with zero parts left out."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not set(value) <= {"absolute", "relative"}:
        raise QuizQuestionInvalid(
            "tolerance is {absolute: x} or {relative: x} (0.001 is 0.1%)",
            "tolerance",
        )
    rule = {}
    for part in ("absolute", "relative"):
        if part not in value:
            continue
        number = _number(value[part], f"tolerance.{part}", "tolerance")
        if number < 0:
            raise QuizQuestionInvalid(
                f"tolerance.{part} must be >= 0, got {number}", "tolerance"
            )
        if number:
            rule[part] = number
    return rule


def _close(a, b, tolerance: dict) -> bool:
    """Would a learner's `a` be accepted as `b`, or `b` as `a`, under `tolerance`?"""
    absolute = tolerance.get("absolute", 0)
    relative = tolerance.get("relative", 0)
    return within(Decimal(repr(a)), b, absolute, relative) or within(
        Decimal(repr(b)), a, absolute, relative
    )


def _misconceptions(value, kind: str, key, choices: list[str], tolerance) -> list:
    if value is None:
        return []
    shape = (
        "misconceptions is a list of {choice: <option index>, diagnosis, says}"
        if kind == "choice"
        else "misconceptions is a list of {answer: <number>, diagnosis, says}"
    )
    if not isinstance(value, list) or not all(isinstance(m, dict) for m in value):
        raise QuizQuestionInvalid(shape, "misconceptions")
    where = "choice" if kind == "choice" else "answer"
    result: list[dict] = []
    for n, item in enumerate(value, start=1):
        name = f"misconception {n}"
        unknown = set(item) - {where, "diagnosis", "says"}
        if unknown:
            raise QuizQuestionInvalid(
                f"{name}: unknown keys {', '.join(sorted(map(str, unknown)))} "
                f"({shape})",
                "misconceptions",
            )
        if where not in item:
            raise QuizQuestionInvalid(
                f"{name} needs `{where}` ({shape})", "misconceptions"
            )
        if kind == "choice":
            wrong = _index(
                item[where], len(choices), f"{name}: choice", "misconceptions"
            )
            if wrong == key:
                raise QuizQuestionInvalid(
                    f"{name} names option {wrong}, the right answer: a "
                    "misconception is a wrong answer",
                    "misconceptions",
                )
            same = next((i for i, m in enumerate(result) if m[where] == wrong), None)
        else:
            wrong = _number(item[where], f"{name}: answer", "misconceptions")
            if _close(wrong, key, tolerance):
                raise QuizQuestionInvalid(
                    f"{name}'s answer {wrong} is accepted as the key {key} "
                    "within the tolerance: a misconception is a wrong answer",
                    "misconceptions",
                )
            same = next(
                (i for i, m in enumerate(result) if _close(m[where], wrong, tolerance)),
                None,
            )
        if same is not None:
            raise QuizQuestionInvalid(
                f"misconceptions {same + 1} and {n} are the same "
                f"{'option' if kind == 'choice' else 'answer within the tolerance'}:"
                " name each wrong answer once",
                "misconceptions",
            )
        entry: dict = {where: wrong}
        if item.get("diagnosis") is not None:
            entry["diagnosis"] = _slug(item["diagnosis"], f"{name}: diagnosis")
        entry["says"] = _text(item.get("says"), f"{name}: says", limit=300)
        result.append(entry)
    return result


def check(spec) -> dict:
    """The question in its stored form, or QuizQuestionInvalid saying what to fix.

    The loader checks every file with it and the admin's form every save,
    so the two accept the same questions.
    """
    if not isinstance(spec, dict):
        raise QuizQuestionInvalid("a quiz question is a YAML mapping")
    unknown = set(spec) - set(KEYS)
    if unknown:
        raise QuizQuestionInvalid(
            f"unknown keys: {', '.join(sorted(map(str, unknown)))} "
            f"(known: {', '.join(KEYS)})",
            next(iter(sorted(map(str, unknown)))),
        )
    for key in ("slug", "title", "section", "kind", "prompt"):
        if spec.get(key) in (None, ""):
            raise QuizQuestionInvalid(f"{key} is required", key)
    clean: dict = {
        "slug": _slug(spec["slug"], "slug"),
        "title": _text(spec["title"], "title", limit=_TITLE_MAX),
        "section": _slug(spec["section"], "section"),
    }
    lessons = spec.get("lessons") or []
    if not isinstance(lessons, list):
        raise QuizQuestionInvalid("lessons is a list of lesson slugs", "lessons")
    lessons = [_slug(s, "each of lessons") for s in lessons]
    if len(set(lessons)) != len(lessons):
        raise QuizQuestionInvalid("lessons names a lesson twice", "lessons")
    if lessons:
        clean["lessons"] = lessons
    kind = spec["kind"]
    if kind not in KINDS:
        raise QuizQuestionInvalid(
            f"kind must be choice or numeric, got {kind!r} (a recall question "
            "is self-rated, so a quiz cannot score it)",
            "kind",
        )
    clean["kind"] = kind
    clean["prompt"] = _text(spec["prompt"], "prompt")
    if "answer" not in spec or spec["answer"] is None:
        raise QuizQuestionInvalid(
            "answer is required: the right option's 0-based index (choice) or "
            "the number (numeric)",
            "answer",
        )
    choices: list[str] = []
    tolerance: dict = {}
    if kind == "choice":
        if spec.get("tolerance") is not None:
            raise QuizQuestionInvalid(
                "tolerance is for numeric questions only", "tolerance"
            )
        choices = _choices(spec.get("choices"))
        clean["choices"] = choices
        key = _index(spec["answer"], len(choices), "answer", "answer")
    else:
        if spec.get("choices") not in (None, []):
            raise QuizQuestionInvalid(
                "choices are for choice questions only: a numeric question "
                "takes a number",
                "choices",
            )
        key = _number(spec["answer"], "answer", "answer")
        tolerance = _tolerance(spec.get("tolerance"))
    clean["answer"] = key
    if tolerance:
        clean["tolerance"] = tolerance
    explanation = _text(spec.get("explanation"), "explanation", required=False)
    if explanation:
        clean["explanation"] = explanation
    misconceptions = _misconceptions(
        spec.get("misconceptions"), kind, key, choices, tolerance
    )
    if misconceptions:
        clean["misconceptions"] = misconceptions
    return clean


def missing_diagnoses(spec: dict) -> list[str]:
    """The diagnoses a checked question names that the database lacks."""
    wanted = {
        m["diagnosis"] for m in spec.get("misconceptions", []) if "diagnosis" in m
    }
    known = set(
        Diagnosis.objects.filter(slug__in=wanted).values_list("slug", flat=True)
    )
    return [f"diagnosis {slug}" for slug in sorted(wanted - known)]


# Stored form <-> file form ------------------------------------------------------


def values_of(spec: dict) -> dict:
    """A checked question's model fields (but section and lessons)."""
    tolerance = spec.get("tolerance", {})
    choice = spec["kind"] == "choice"
    return {
        "title": spec["title"],
        "kind": spec["kind"],
        "prompt": spec["prompt"],
        "choices": spec.get("choices", []) if choice else [],
        "correct_choice": spec["answer"] if choice else None,
        "numeric_answer": None if choice else float(spec["answer"]),
        "tolerance": float(tolerance.get("absolute", 0)),
        "relative_tolerance": float(tolerance.get("relative", 0)),
        "explanation": spec.get("explanation", ""),
        "misconceptions": spec.get("misconceptions", []),
    }


def spec_from_fields(
    *,
    slug,
    title,
    section,
    lessons,
    kind,
    prompt,
    choices,
    correct_choice,
    numeric_answer,
    tolerance,
    relative_tolerance,
    explanation,
    misconceptions,
) -> dict:
    """The file's mapping for a question's field values (the admin, export)."""
    spec = {
        "slug": slug,
        "title": title,
        "section": section,
        "lessons": list(lessons),
        "kind": kind,
        "prompt": prompt,
    }
    if kind == "choice":
        spec["choices"] = choices
        spec["answer"] = correct_choice
    else:
        spec["answer"] = numeric_answer
        rule = {"absolute": tolerance or 0, "relative": relative_tolerance or 0}
        spec["tolerance"] = {k: v for k, v in rule.items() if v} or None
    spec["explanation"] = explanation
    # In any key order (jsonb keeps none): check() writes the file's order.
    spec["misconceptions"] = misconceptions
    return spec


def spec_of(question: QuizQuestion, lessons: list[str]) -> dict:
    return spec_from_fields(
        slug=question.slug,
        title=question.title,
        section=question.section.slug,
        lessons=lessons,
        kind=question.kind,
        prompt=question.prompt,
        choices=question.choices,
        correct_choice=question.correct_choice,
        numeric_answer=question.numeric_answer,
        tolerance=question.tolerance,
        relative_tolerance=question.relative_tolerance,
        explanation=question.explanation,
        misconceptions=question.misconceptions,
    )


def export_specs() -> dict[str, dict]:
    """{quiz-questions/<slug>.yaml: checked mapping} for every stored question.

    Lessons in course order (the table keeps no order). A stored question
    the loader would refuse (edited around the admin's checks) stops the
    export: ContentError naming its file and what to fix.
    """
    questions = QuizQuestion.objects.select_related("section").prefetch_related(
        "lessons__section"
    )
    files, problems = {}, []
    for question in questions.order_by("slug"):
        lessons = sorted(
            question.lessons.all(), key=lambda le: (le.section.order, le.order)
        )
        relative = f"{QUIZ_QUESTION_DIR}/{question.slug}.yaml"
        try:
            files[relative] = check(spec_of(question, [le.slug for le in lessons]))
        except QuizQuestionInvalid as exc:
            problems.append(ContentProblem(Path(relative), 0, str(exc)))
    if problems:
        raise ContentError(problems)
    return files


# Loading ------------------------------------------------------------------------


def _key_lines(text: str) -> dict[str, int]:
    """The 1-based line of each top-level key, for messages."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        key.value: key.start_mark.line + 1
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }


def _read(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ContentError(
            [
                ContentProblem(
                    path, mark.line + 1 if mark else 1, f"invalid YAML: {problem}"
                )
            ]
        ) from None
    try:
        spec = check(data)
        if spec["slug"] != path.stem:
            raise QuizQuestionInvalid(
                f"slug {spec['slug']!r} is not the file's name ({path.stem!r})", "slug"
            )
    except QuizQuestionInvalid as exc:
        line = _key_lines(text).get(exc.key or "", 1)
        raise ContentError([ContentProblem(path, line, str(exc))]) from None
    return spec


def read_quiz_questions(root: Path) -> list[tuple[Path, dict]]:
    """Every quiz-only question file under `root`, checked, or ContentError.

    Reads no database: called before load_content's transaction, so a bad
    file stops the load with nothing written.
    """
    folder = Path(root) / QUIZ_QUESTION_DIR
    records, problems = [], []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            records.append((path, _read(path)))
        except ContentError as exc:
            problems += exc.problems
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(ContentProblem(path, 1, f"cannot read: {exc}"))
    if problems:
        raise ContentError(problems)
    return records


def load_quiz_questions(records: list[tuple[Path, dict]], relative, note) -> None:
    """Upsert each question; ContentError if it names what does not exist.

    Called inside content_load's transaction, after lessons and diagnoses.
    """
    bank_rows_load(
        records,
        relative,
        note,
        model=QuizQuestion,
        label="quiz question",
        values=values_of,
        line=1,
    )


def quiz_questions_not_in(records: list[tuple[Path, dict]]) -> list[str]:
    """Slugs of stored questions no file describes (left in place, reported)."""
    slugs = {spec["slug"] for _path, spec in records}
    return list(
        QuizQuestion.objects.exclude(slug__in=slugs)
        .order_by("slug")
        .values_list("slug", flat=True)
    )
