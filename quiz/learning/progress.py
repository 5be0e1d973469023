"""A learner's progress: reading, self-check answers, streak and timeline.

Writes (`lesson_read_record`, `question_attempt_create`) and the reads the
home, lesson and progress pages need. Every read is a fixed number of
queries, whatever the size of the course or of the learner's history.
Exercise submissions count too, through quiz.learning.exercise_progress.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import TruncDate
from django.utils import timezone

from quiz.content.models import Lesson, Question, Section
from quiz.core.exam_mode import ExamLocked, question_check
from quiz.core.score_events import scores_changed
from quiz.learning import review
from quiz.learning.exercise_progress import exercise_progress
from quiz.learning.models import LessonRead, QuestionAttempt, ReviewCard, ReviewLog

ANSWER_MAX_CHARS = 5000
TIMELINE_DAYS = 30


class AnswerInvalid(ValueError):
    """A self-check answer that cannot be judged; the message is for the learner."""


# Writes


def lesson_read_record(*, user, lesson: Lesson) -> None:
    """Note that `user` opened `lesson`: first_read_at kept, last_read_at moved.

    One upsert statement, so two tabs opening the same lesson never collide
    on the (user, lesson) constraint.
    """
    LessonRead.objects.bulk_create(
        [LessonRead(user=user, lesson=lesson)],
        update_conflicts=True,
        unique_fields=["user", "lesson"],
        update_fields=["last_read_at"],
    )


def answer_clean(*, question: Question, data: Mapping[str, str]) -> tuple[str, bool]:
    """Validate a posted answer; return (answer text to store, correct)."""
    if question.kind == Question.Kind.CHOICE:
        raw = (data.get("answer") or "").strip()
        if not raw:
            raise AnswerInvalid("Choose one of the options.")
        # Over 6 digits is no option, and int() refuses over 4,300 of them.
        if (
            not (raw.isascii() and raw.isdigit())
            or len(raw) > 6
            or int(raw) >= len(question.choices)
        ):
            raise AnswerInvalid("That option is not one of this question's choices.")
        return raw, question.is_correct(raw)
    if question.kind == Question.Kind.NUMERIC:
        raw = (data.get("answer") or "").strip()
        if not raw:
            raise AnswerInvalid("Enter a number.")
        try:
            value = float(raw.replace(",", "").replace("_", "").replace(" ", ""))
        except ValueError:
            raise AnswerInvalid(f"{raw[:40]!r} is not a number.") from None
        if not math.isfinite(value):
            raise AnswerInvalid("Enter a finite number.")
        return raw[:100], question.is_correct(str(value))
    text = (data.get("answer") or "").strip()
    if len(text) > ANSWER_MAX_CHARS:
        raise AnswerInvalid(f"Keep your answer under {ANSWER_MAX_CHARS} characters.")
    rating = (data.get("self_rating") or "").strip()
    if rating not in ("right", "wrong"):
        raise AnswerInvalid(
            "Compare with the model answer, then say whether you got it right."
        )
    return text, rating == "right"


def question_attempt_create(
    *, user, question: Question, data: Mapping[str, str]
) -> QuestionAttempt:
    """Record one self-check answer and schedule its review card.

    A wrong answer makes the question's card due now; a right one counts as
    a Good review of an existing card (and creates none). ExamLocked while
    the learner sits a quiz that draws this question (its verdict is a key).
    """
    question_check(user, question.pk)
    answer, correct = answer_clean(question=question, data=data)
    with transaction.atomic():
        attempt = QuestionAttempt.objects.create(
            user=user, question=question, answer=answer, correct=correct
        )
        if correct:
            review.question_card_review_good(user=user, question=question)
        else:
            review.question_card_schedule(user=user, question=question)
        scores_changed([user.pk])
    return attempt


PENDING_ANSWER = "pending_answer"  # session key


def pending_answer_keep(
    *, session, lesson: Lesson, question_id: int, data: Mapping[str, str]
) -> None:
    """Keep a visitor's answer while "Check answer" sends them to log in
    (the session survives the log-in), so it is judged when they are back."""
    session[PENDING_ANSWER] = {
        "lesson": lesson.slug,
        "question": question_id,
        "data": {
            key: str(data.get(key) or "")[:ANSWER_MAX_CHARS]
            for key in ("answer", "self_rating")
        },
    }


def pending_answer_judge(*, session, user, lesson: Lesson) -> tuple[dict, dict]:
    """Judge the kept answer for `lesson` once, now that `user` is logged in.

    Returns (errors, posted) by question id for the page when it was not a
    valid answer (empty ones when there was none, or it was recorded).
    """
    pending = session.get(PENDING_ANSWER)
    if not isinstance(pending, dict) or pending.get("lesson") != lesson.slug:
        return {}, {}
    del session[PENDING_ANSWER]
    question = next(
        (q for q in lesson.questions.all() if q.pk == pending.get("question")), None
    )
    data = pending.get("data")
    if question is None or not isinstance(data, dict):
        return {}, {}
    data = {str(key): str(value) for key, value in data.items()}
    try:
        question_attempt_create(user=user, question=question, data=data)
    except (AnswerInvalid, ExamLocked) as exc:
        return {question.pk: str(exc)}, {question.pk: data}
    return {}, {}


# Reads


def reads_by_lesson(*, user) -> dict[int, dt.datetime]:
    """lesson id -> when the learner last opened it."""
    if not user.is_authenticated:
        return {}
    return dict(
        LessonRead.objects.filter(user=user).values_list("lesson_id", "last_read_at")
    )


def lesson_to_continue(
    *, lessons: Iterable[Lesson], reads: Mapping[int, dt.datetime]
) -> Lesson | None:
    """The first unread lesson after the most recently read one.

    A new learner starts at the first lesson; wraps around to earlier unread
    lessons; None once everything is read.
    """
    ordered = list(lessons)
    if not ordered:
        return None
    if not reads:
        return ordered[0]
    latest = max(reads, key=reads.__getitem__)
    start = next((i for i, les in enumerate(ordered) if les.pk == latest), -1) + 1
    for lesson in ordered[start:] + ordered[:start]:
        if lesson.pk not in reads:
            return lesson
    return None


@dataclass(frozen=True)
class SectionProgress:
    section: Section
    lessons: list[Lesson]
    read: int

    @property
    def total(self) -> int:
        return len(self.lessons)


@dataclass(frozen=True)
class HomeView:
    sections: list[SectionProgress]
    read_ids: frozenset[int]
    continue_lesson: Lesson | None
    started: bool


def home_progress(*, user, sections: Iterable[Section]) -> HomeView:
    """Per-section reading progress and where to continue (one query)."""
    reads = reads_by_lesson(user=user)
    rows = []
    ordered: list[Lesson] = []
    for section in sections:
        lessons = list(section.lessons.all())
        ordered.extend(lessons)
        rows.append(
            SectionProgress(
                section=section,
                lessons=lessons,
                read=sum(1 for les in lessons if les.pk in reads),
            )
        )
    return HomeView(
        sections=rows,
        read_ids=frozenset(reads),
        continue_lesson=lesson_to_continue(lessons=ordered, reads=reads),
        started=bool(reads),
    )


def questions_right_count(*, user) -> int:
    """Distinct self-checks whose latest attempt was right."""
    latest = (
        QuestionAttempt.objects.filter(user=user, question=OuterRef("pk"))
        .order_by("-created_at", "-pk")
        .values("correct")[:1]
    )
    return (
        Question.objects.annotate(latest_correct=Subquery(latest))
        .filter(latest_correct=True)
        .count()
    )


def exercises_passed_count(*, user) -> int:
    exercises = exercise_progress()
    return exercises.passed_count(user=user) if exercises else 0


def exercises_total_count() -> int:
    exercises = exercise_progress()
    return exercises.total_count() if exercises and exercises.total_count else 0


def _activity_kinds() -> list[tuple]:
    """(model, datetime field, series label) for the activity chart and streak."""
    kinds = [
        (LessonRead, "first_read_at", "lessons opened"),
        (QuestionAttempt, "created_at", "self-check answers"),
        (ReviewLog, "reviewed_at", "reviews"),
    ]
    exercises = exercise_progress()
    if exercises:
        kinds.append(
            (
                exercises.activity_model,
                exercises.activity_field,
                exercises.activity_label,
            )
        )
    return kinds


def _days(model, field: str, *, user, since: dt.date | None = None):
    qs = model.objects.filter(user=user)
    if since is not None:
        qs = qs.filter(**{f"{field}__date__gte": since})
    return qs.annotate(day=TruncDate(field))


def activity_days(*, user) -> set[dt.date]:
    """Every day with any activity: a read, an answer, a review, a submission."""
    parts = [
        _days(model, field, user=user).values_list("day", flat=True).order_by()
        for model, field, _ in _activity_kinds()
    ]
    # last_read_at: re-opening a lesson on a later day is activity too.
    parts.append(
        _days(LessonRead, "last_read_at", user=user)
        .values_list("day", flat=True)
        .order_by()
    )
    first, *rest = parts
    return set(first.union(*rest))


def streak_count(*, days: set[dt.date], today: dt.date) -> int:
    """Consecutive active days ending today, or yesterday if today is idle."""
    day = today if today in days else today - dt.timedelta(days=1)
    streak = 0
    while day in days:
        streak += 1
        day -= dt.timedelta(days=1)
    return streak


@dataclass(frozen=True)
class Timeline:
    days: list[dt.date]
    series: list[tuple[str, list[int]]]

    def rows(self) -> list[tuple[dt.date, list[int], int]]:
        """(day, counts per series, total) for the data table."""
        rows = []
        for i, day in enumerate(self.days):
            counts = [values[i] for _, values in self.series]
            rows.append((day, counts, sum(counts)))
        return rows


def activity_timeline(*, user, today: dt.date, days: int = TIMELINE_DAYS) -> Timeline:
    """Activity per day and kind over the last `days` days (one query per kind)."""
    since = today - dt.timedelta(days=days - 1)
    calendar = [since + dt.timedelta(days=i) for i in range(days)]
    series = []
    for model, field, label in _activity_kinds():
        per_day = dict(
            _days(model, field, user=user, since=since)
            .values("day")
            .annotate(n=Count("pk"))
            .order_by()
            .values_list("day", "n")
        )
        series.append((label, [per_day.get(day, 0) for day in calendar]))
    return Timeline(days=calendar, series=series)


@dataclass(frozen=True)
class ProgressSummary:
    lessons_read: int
    lessons_total: int
    questions_right: int
    questions_total: int
    exercises_passed: int
    exercises_total: int
    cards_due: int
    streak: int
    timeline: Timeline


def progress_summary(*, user, today: dt.date | None = None) -> ProgressSummary:
    today = today or timezone.localdate()
    return ProgressSummary(
        lessons_read=LessonRead.objects.filter(user=user).count(),
        lessons_total=Lesson.objects.count(),
        questions_right=questions_right_count(user=user),
        questions_total=Question.objects.count(),
        exercises_passed=exercises_passed_count(user=user),
        exercises_total=exercises_total_count(),
        cards_due=review.cards_due_count(user=user),
        streak=streak_count(days=activity_days(user=user), today=today),
        timeline=activity_timeline(user=user, today=today),
    )


def lesson_cards(*, user, lesson: Lesson) -> dict[int, ReviewCard]:
    """follow-up id -> the learner's card, for "next review" on the lesson page."""
    if not user.is_authenticated:
        return {}
    cards = ReviewCard.objects.filter(user=user, follow_up__lesson=lesson).only(
        "pk", "follow_up_id", "due"
    )
    return {card.follow_up_id: card for card in cards}


def latest_attempts(*, user, lesson: Lesson) -> dict[int, QuestionAttempt]:
    """question id -> the learner's latest answer to it, for this lesson's page
    (so a reload still shows what they answered and its feedback). One query."""
    if not user.is_authenticated:
        return {}
    latest = (
        QuestionAttempt.objects.filter(user=user, question=OuterRef("pk"))
        .order_by("-created_at", "-pk")
        .values("pk")[:1]
    )
    ids = (
        Question.objects.filter(lesson=lesson)
        .annotate(latest=Subquery(latest))
        .exclude(latest=None)
        .values_list("latest", flat=True)
    )
    rows = QuestionAttempt.objects.filter(pk__in=ids).select_related("question")
    return {row.question_id: row for row in rows}


def answer_fields(attempt: QuestionAttempt | None) -> dict[str, str]:
    """An attempt as the form fields that posted it, to refill the form."""
    if attempt is None:
        return {}
    fields = {"answer": attempt.answer}
    if attempt.question.kind == Question.Kind.RECALL:
        fields["self_rating"] = "right" if attempt.correct else "wrong"
    return fields
