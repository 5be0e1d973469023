"""The question picker: search the bank a quiz is built from.

An instructor looks for questions by words, lesson, section and kind and
sees a sample of each (a template's numbers change per learner: one draw
stands for them), then adds it to a slot. The builder's page and the API
(`GET /api/v1/quiz-bank/`) both search here. Each result carries the word
the slot text uses (`template:kv-cache-bytes`), so the picker and the text
form are one format.
"""

from __future__ import annotations

from django.db.models import Q

from grader.models import Exercise
from quiz.content.models import Question, QuestionTemplate, QuizQuestion
from teaching.quizzes.bank import SCORED_KINDS, Bank
from teaching.quizzes.security import practice_words

SOURCES = ("self-check", "template", "quiz-question", "exercise")
KINDS = ("choice", "numeric", "code")
LIMIT = 50
SAMPLE_SEED = "sample:0"


class SearchInvalid(ValueError):
    """A filter that names nothing; `field` says which."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


def _candidates(text: str, lesson: str, section: str, source: str) -> list[str]:
    """The refs that match, in course order, self-checks first."""
    refs: list[str] = []
    if source in ("", "self-check"):
        rows = Question.objects.filter(kind__in=SCORED_KINDS)
        if text:
            rows = rows.filter(
                Q(prompt__icontains=text) | Q(lesson__title__icontains=text)
            )
        if lesson:
            rows = rows.filter(lesson__slug=lesson)
        if section:
            rows = rows.filter(lesson__section__slug=section)
        refs += [
            f"q:{pk}"
            for pk in rows.order_by(
                "lesson__section__order", "lesson__order", "order"
            ).values_list("pk", flat=True)[:LIMIT]
        ]
    for name, model, prefix in (
        ("template", QuestionTemplate, "t"),
        ("quiz-question", QuizQuestion, "b"),
    ):
        if source not in ("", name):
            continue
        rows = model.objects.all()
        if text:
            words = Q(title__icontains=text) | Q(slug__icontains=text)
            words |= (
                Q(spec__prompt__icontains=text)
                if model is QuestionTemplate
                else Q(prompt__icontains=text)
            )
            rows = rows.filter(words)
        if lesson:
            rows = rows.filter(lessons__slug=lesson)
        if section:
            rows = rows.filter(section__slug=section)
        slugs = rows.order_by("section__order", "slug").values_list("slug", flat=True)
        refs += [f"{prefix}:{slug}" for slug in dict.fromkeys(slugs[:LIMIT])]
    if source in ("", "exercise"):
        rows = Exercise.objects.filter(published=True)
        if text:
            rows = rows.filter(
                Q(title__icontains=text)
                | Q(slug__icontains=text)
                | Q(prompt__icontains=text)
            )
        if lesson:
            rows = rows.filter(lesson__slug=lesson)
        if section:
            rows = rows.filter(lesson__section__slug=section)
        refs += [
            f"x:{slug}"
            for slug in rows.order_by("slug").values_list("slug", flat=True)[:LIMIT]
        ]
    return refs


WORDS = {"q": "question", "t": "template", "b": "quiz-question", "x": "exercise"}
NAMES = {"q": "self-check", "t": "template", "b": "quiz-question", "x": "exercise"}


FILTERS = ("q", "lesson", "section", "kind", "source")  # a search's parameters


def bank_search_params(params) -> list[dict]:
    """bank_search with the filters of a query string (the API's and the
    page's: `q` is the words)."""
    return bank_search(
        text=params.get("q", ""),
        lesson=params.get("lesson", ""),
        section=params.get("section", ""),
        kind=params.get("kind", ""),
        source=params.get("source", ""),
    )


def bank_search(
    *,
    text: str = "",
    lesson: str = "",
    section: str = "",
    kind: str = "",
    source: str = "",
) -> list[dict]:
    """Questions of the bank that match every filter given (at most LIMIT)."""
    text = text.strip()[:200]
    if kind and kind not in KINDS:
        raise SearchInvalid(f"kind is one of {', '.join(KINDS)}.", field="kind")
    if source and source not in SOURCES:
        raise SearchInvalid(f"source is one of {', '.join(SOURCES)}.", field="source")
    refs = _candidates(text, lesson.strip(), section.strip(), source)
    bank = Bank(refs)
    found = []
    for ref in refs:
        if not bank.has(ref):
            continue
        drawn = bank.draw(ref, SAMPLE_SEED)
        if kind and drawn.kind != kind:
            continue
        prefix, name = ref.split(":", 1)
        found.append(
            {
                "ref": ref,
                "slot_word": f"{WORDS[prefix]}:{name}",
                "source": NAMES[prefix],
                "kind": drawn.kind,
                "title": drawn.title,
                "sample": {
                    "prompt": drawn.prompt,
                    "options": drawn.options,
                    "answer": drawn.answer_text(),
                    "tolerance": drawn.tolerance_text()
                    if drawn.kind == "numeric"
                    else "",
                    "varies": prefix == "t",
                },
                # In a quiz whose feedback is held back (security.py).
                "practice": practice_words([ref]),
            }
        )
        if len(found) >= LIMIT:
            break
    return found
