"""The question bank a quiz draws from: self-checks, templates, quiz-only
questions and code exercises, by ref.

A ref names a question: "q:<id>" a lesson's choice or numeric self-check,
"t:<slug>" a question template, "b:<slug>" a quiz-only question (a
QuizQuestion: a fixed prompt and key like a self-check's, which no lesson
page, self-check or review card shows, so a quiz that holds its feedback
back can use it), "x:<slug>" a code exercise (graded by the grader, see
quizzes.code). `Bank` turns refs and variant seeds into `Drawn` questions
(prompt, options, key, and the named wrong answers of templates and
quiz-only questions) with a fixed number of queries, and expands a slot's
pool into refs.

A pool names self-checks ("questions": ids), "templates", "quiz_questions"
and "exercises" (slugs), or whole "lessons" and "sections". A lesson or a
section brings its self-checks, templates and quiz-only questions (a
quiz-only question by its lessons, or by its section), not its exercises:
a code question takes far longer than the others, so an instructor names
each one ("exercises") rather than drawing it by chance.

Recall self-checks are left out of quizzes: they are self-rated, and a
closed assessment cannot take a learner's word for their own score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from grading_engine.quiz_bank import variants
from grading_engine.quiz_bank.numbers import NotANumber, parse_number, within

from grader.models import Exercise
from quiz.content.models import (
    Lesson,
    Question,
    QuestionTemplate,
    QuizQuestion,
    Section,
)
from quiz.core.db_text import db_text_clean
from quiz.core.params import BIGINT_MAX, BadNumber, whole_number

SCORED_KINDS = (Question.Kind.CHOICE, Question.Kind.NUMERIC)
POOL_KEYS = (
    "questions",
    "templates",
    "quiz_questions",
    "exercises",
    "lessons",
    "sections",
)
# What a missing slug of each pool key is called: "No quiz question x."
_POOL_NAMES = {
    "templates": "template",
    "quiz_questions": "quiz question",
    "exercises": "exercise",
    "lessons": "lesson",
    "sections": "section",
}


class PoolInvalid(ValueError):
    """A slot's pool names something that does not exist or cannot be scored."""


@dataclass(frozen=True)
class WrongAnswer:
    """A misconception's answer for this variant: an option or a number."""

    value: str  # as shown (an option's text, or the number formatted)
    diagnosis: str
    says: str
    number: object = None  # numeric: the value itself


@dataclass(frozen=True)
class Drawn:
    """One question as an attempt shows and scores it."""

    ref: str
    kind: str  # "choice", "numeric" or "code"
    title: str
    prompt: str
    options: list[str] = field(default_factory=list)  # in stored order
    correct: int | None = None  # choice: index into options
    answer: object = None  # numeric: the key
    tolerance: tuple[float, float] = (0.0, 0.0)  # (absolute, relative)
    explanation: str = ""
    wrong: list[WrongAnswer] = field(default_factory=list)
    starter: str = ""  # code: what the editor starts with
    signature: str = ""  # code: what the answer must define

    def answer_text(self) -> str:
        if self.kind == "code":
            return "graded by the course's grader"
        if self.kind == "choice":
            return self.options[self.correct]
        return variants.show(self.answer)

    def tolerance_text(self) -> str:
        absolute, relative = self.tolerance
        if relative and absolute:  # a quiz-only question may give both
            return (
                f"within {variants.show(absolute)} or {relative * 100:g}%, "
                "whichever is larger"
            )
        if relative:
            return f"within {relative * 100:g}%"
        return f"within {variants.show(absolute)}" if absolute else "exactly"


def clean_number(text) -> str:
    """A numeric answer as stored: the learner's text, checked; NotANumber if bad."""
    raw = str(text).strip()
    parse_number(raw)
    return raw


def is_right(drawn: Drawn, value) -> bool:
    """Whether a stored answer (an option index or number text) is right."""
    if value is None or value == "" or drawn.kind == "code":
        return False  # code is scored by its grader's verdict (quizzes.code)
    if drawn.kind == "choice":
        return isinstance(value, int) and value == drawn.correct
    try:
        number = parse_number(value)
    except NotANumber:
        return False
    absolute, relative = drawn.tolerance
    return within(number, drawn.answer, absolute, relative)


def matches_wrong(drawn: Drawn, value) -> WrongAnswer | None:
    """The misconception a wrong answer shows, if the content names one."""
    if value is None or value == "" or drawn.kind == "code":
        return None
    if is_right(drawn, value):
        return None
    if drawn.kind == "choice":
        text = drawn.options[value] if isinstance(value, int) else None
        return next((w for w in drawn.wrong if w.value == text), None)
    try:
        number = parse_number(value)
    except NotANumber:
        return None
    absolute, relative = drawn.tolerance
    for wrong in drawn.wrong:
        if isinstance(wrong.number, int | float) and within(
            number, wrong.number, absolute, relative
        ):
            return wrong
    return None


def _question(q: Question) -> Drawn:
    if q.kind == Question.Kind.CHOICE:
        return Drawn(
            ref=f"q:{q.pk}",
            kind="choice",
            title=q.lesson.title,
            prompt=q.prompt,
            options=[str(c) for c in q.choices],
            correct=q.correct_choice,
            explanation=q.explanation,
        )
    answer = q.numeric_answer
    if answer is not None and math.isfinite(answer) and answer.is_integer():
        answer = int(answer)
    return Drawn(
        ref=f"q:{q.pk}",
        kind="numeric",
        title=q.lesson.title,
        prompt=q.prompt,
        answer=answer,
        tolerance=(q.tolerance, 0.0),
        explanation=q.explanation,
    )


def _whole(number):
    """7087872.0 as 7087872 (shown and compared as the author wrote it)."""
    if isinstance(number, float) and math.isfinite(number) and number.is_integer():
        return int(number)
    return number


def _quiz_question(q: QuizQuestion) -> Drawn:
    """A quiz-only question: a self-check's fixed key, plus its title, its
    relative tolerance and its misconceptions as named wrong answers."""
    wrong = []
    for m in q.misconceptions if isinstance(q.misconceptions, list) else []:
        if not isinstance(m, dict) or not m.get("says"):
            continue  # the loader and the admin refuse these; never crash a quiz
        named = {"diagnosis": m.get("diagnosis") or "", "says": m["says"]}
        if q.kind == QuizQuestion.Kind.CHOICE:
            index = m.get("choice")
            if isinstance(index, int) and 0 <= index < len(q.choices):
                wrong.append(WrongAnswer(value=str(q.choices[index]), **named))
        else:
            number = _whole(m.get("answer"))
            if isinstance(number, int | float) and not isinstance(number, bool):
                wrong.append(
                    WrongAnswer(value=variants.show(number), number=number, **named)
                )
    if q.kind == QuizQuestion.Kind.CHOICE:
        return Drawn(
            ref=f"b:{q.slug}",
            kind="choice",
            title=q.title,
            prompt=q.prompt,
            options=[str(c) for c in q.choices],
            correct=q.correct_choice,
            explanation=q.explanation,
            wrong=wrong,
        )
    return Drawn(
        ref=f"b:{q.slug}",
        kind="numeric",
        title=q.title,
        prompt=q.prompt,
        answer=_whole(q.numeric_answer),
        tolerance=(q.tolerance, q.relative_tolerance),
        explanation=q.explanation,
        wrong=wrong,
    )


def _template(t: QuestionTemplate, seed: str) -> Drawn:
    variant = variants.render(t.spec, seed)
    wrong = [
        WrongAnswer(
            value=variants.show(value),
            diagnosis=m.diagnosis,
            says=m.says,
            number=value if isinstance(value, int | float) else None,
        )
        for m, value in variant.wrong
    ]
    if t.spec["kind"] == "choice":
        return Drawn(
            ref=f"t:{t.slug}",
            kind="choice",
            title=t.title,
            prompt=variant.prompt,
            options=variant.options,
            correct=variant.correct_option,
            explanation=variant.explanation,
            wrong=wrong,
        )
    return Drawn(
        ref=f"t:{t.slug}",
        kind="numeric",
        title=t.title,
        prompt=variant.prompt,
        answer=variant.answer,
        tolerance=variants.tolerance(t.spec),
        explanation=variant.explanation,
        wrong=wrong,
    )


def _exercise(e: Exercise) -> Drawn:
    return Drawn(
        ref=f"x:{e.slug}",
        kind="code",
        title=e.title,
        prompt=e.prompt,
        starter=e.starter,
        signature=e.signature,
    )


def _question_id(ref: str) -> int | None:
    """The id in a "q:<id>" ref; None if it is not one (ASCII digits, a bigint:
    int() takes "²"-like digits and refuses over 4,300 of them)."""
    try:
        return whole_number(ref[2:], minimum=1)
    except BadNumber:
        return None


class Bank:
    """Questions, templates, quiz-only questions and exercises for a set of
    refs, in at most four queries (the last two only when refs name any)."""

    def __init__(self, refs) -> None:
        refs = set(refs)
        ids = [_question_id(r) for r in refs if r.startswith("q:")]
        ids = [i for i in ids if i is not None]
        slugs = [r[2:] for r in refs if r.startswith("t:")]
        only = [r[2:] for r in refs if r.startswith("b:")]
        exercises = [r[2:] for r in refs if r.startswith("x:")]
        self.questions = {
            f"q:{q.pk}": q
            for q in Question.objects.filter(pk__in=ids).select_related("lesson")
        }
        self.templates = {
            f"t:{t.slug}": t for t in QuestionTemplate.objects.filter(slug__in=slugs)
        }
        self.quiz_questions = {
            f"b:{q.slug}": q
            for q in (QuizQuestion.objects.filter(slug__in=only) if only else ())
        }
        self.exercises = {
            f"x:{e.slug}": e
            for e in (
                Exercise.objects.filter(slug__in=exercises, published=True)
                if exercises
                else ()
            )
        }

    def has(self, ref: str) -> bool:
        return (
            ref in self.questions
            or ref in self.templates
            or ref in self.quiz_questions
            or ref in self.exercises
        )

    def draw(self, ref: str, seed: str) -> Drawn:
        if ref in self.questions:
            return _question(self.questions[ref])
        if ref in self.quiz_questions:
            return _quiz_question(self.quiz_questions[ref])
        if ref in self.exercises:
            return _exercise(self.exercises[ref])
        return _template(self.templates[ref], seed)


def pool_refs(pool: dict) -> list[str]:
    """Every ref a pool draws from, in a stable order, without repeats."""
    refs: list[str] = [f"q:{i}" for i in pool.get("questions", [])]
    refs += [f"t:{s}" for s in pool.get("templates", [])]
    refs += [f"b:{s}" for s in pool.get("quiz_questions", [])]
    refs += [f"x:{s}" for s in pool.get("exercises", [])]
    lessons, sections = pool.get("lessons", []), pool.get("sections", [])
    if lessons or sections:
        scored = Question.objects.filter(kind__in=SCORED_KINDS)
        by_lesson = scored.filter(lesson__slug__in=lessons)
        by_section = scored.filter(lesson__section__slug__in=sections)
        refs += [
            f"q:{pk}"
            for pk in (by_lesson | by_section)
            .order_by("lesson__section__order", "lesson__order", "order")
            .values_list("pk", flat=True)
        ]
        templates = QuestionTemplate.objects.filter(
            lessons__slug__in=lessons
        ) | QuestionTemplate.objects.filter(section__slug__in=sections)
        refs += [
            f"t:{slug}"
            for slug in templates.order_by("slug").values_list("slug", flat=True)
        ]
        only = QuizQuestion.objects.filter(
            lessons__slug__in=lessons
        ) | QuizQuestion.objects.filter(section__slug__in=sections)
        refs += [
            f"b:{slug}"
            for slug in only.order_by("section__order", "slug").values_list(
                "slug", flat=True
            )
        ]
    return list(dict.fromkeys(refs))


def pool_check(pool) -> dict:
    """A pool in its stored form, or PoolInvalid naming what is wrong."""
    if not isinstance(pool, dict) or not pool:
        raise PoolInvalid(f"A pool is an object with any of: {', '.join(POOL_KEYS)}.")
    unknown = set(pool) - set(POOL_KEYS)
    if unknown:
        raise PoolInvalid(f"Unknown pool keys: {', '.join(sorted(unknown))}.")
    clean: dict = {}
    for key in POOL_KEYS:
        values = pool.get(key, [])
        if not isinstance(values, list) or len(values) > 500:
            raise PoolInvalid(f"{key} is a list (at most 500).")
        if key == "questions":
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
                raise PoolInvalid("questions lists self-check ids (numbers).")
            # Checked before any query: no database holds an id past bigint
            # (SQLite raises OverflowError on one).
            if not all(1 <= v <= BIGINT_MAX for v in values):
                raise PoolInvalid(
                    f"questions lists self-check ids: whole numbers from 1 to "
                    f"{BIGINT_MAX}."
                )
        elif not all(isinstance(v, str) and v for v in values):
            raise PoolInvalid(f"{key} lists slugs.")
        # PostgreSQL refuses NUL in a query (the API's JSON can carry one).
        elif any(db_text_clean(v) != v for v in values):
            raise PoolInvalid(f"{key} lists slugs: one holds a NUL (or a surrogate).")
        if values:
            clean[key] = list(dict.fromkeys(values))
    _check_exists(clean)
    return clean


def _check_exists(pool: dict) -> None:
    ids = pool.get("questions", [])
    found = dict(Question.objects.filter(pk__in=ids).values_list("pk", "kind"))
    for pk in ids:
        if pk not in found:
            raise PoolInvalid(f"No self-check question {pk}.")
        if found[pk] not in SCORED_KINDS:
            raise PoolInvalid(
                f"Question {pk} is a recall question: it is self-rated, so a "
                "quiz cannot score it. Choose a choice or numeric question."
            )
    for key, rows in (
        ("templates", QuestionTemplate.objects),
        ("quiz_questions", QuizQuestion.objects),
        ("exercises", Exercise.objects.filter(published=True)),
        ("lessons", Lesson.objects),
        ("sections", Section.objects),
    ):
        wanted = pool.get(key, [])
        if not wanted:
            continue
        known = set(rows.filter(slug__in=wanted).values_list("slug", flat=True))
        missing = [s for s in wanted if s not in known]
        if missing:
            raise PoolInvalid(f"No {_POOL_NAMES[key]} {_names_shown(missing)}.")


def _names_shown(names: list[str]) -> str:
    """Slugs as an error message echoes them: the first three, each cut."""
    shown = [n if len(n) <= 60 else n[:60] + "…" for n in names[:3]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" (and {more} more)" if more else "")
