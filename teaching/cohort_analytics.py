"""Cohort analytics: how each exercise and self-check went, for an instructor.

Constant queries per cohort: counts are SQL aggregates; the median needs each
passer's attempt count, which one window-function query returns (one row per
learner who passed, not per submission). Diagnoses live inside the checks
JSON, so the failed submissions' checks are tallied here (one query).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count, Q

from grader.models import Exercise, Submission
from grader.selectors import GRADED
from quiz.content.markdown import render_markdown_plain
from quiz.learning.models import QuestionAttempt
from teaching.models import Cohort, CohortMembership
from teaching.selectors import member_ids

TOP_DIAGNOSES = 5


@dataclass
class DiagnosisCount:
    diagnosis: str
    count: int  # failed submissions that reported it
    learners: int


@dataclass
class ExerciseStats:
    slug: str
    title: str
    lesson: str | None
    attempts: int = 0  # graded submissions (passed or failed)
    learners: int = 0
    learners_passed: int = 0
    median_attempts_to_pass: float | None = None
    diagnoses: list[DiagnosisCount] = field(default_factory=list)
    course_order: tuple = ()  # (section, lesson) order, for ties in activity

    @property
    def active(self) -> bool:
        """Anyone in the cohort has a graded attempt at it."""
        return self.attempts > 0

    @property
    def pass_rate(self) -> float | None:
        """Share of the learners who tried it that passed it (None if nobody tried)."""
        if not self.learners:
            return None
        return round(self.learners_passed / self.learners, 4)


@dataclass
class QuestionStats:
    id: int
    lesson: str
    prompt: str
    kind: str
    attempts: int
    learners: int
    right: int
    lesson_title: str = ""

    @property
    def label(self) -> str:
        """A chart label a person can read: the lesson's title and the
        question's first words (not a slug and a database id)."""
        words = " ".join(render_markdown_plain(self.prompt).split())
        short = words if len(words) <= 48 else words[:47].rstrip() + "…"
        title = render_markdown_plain(self.lesson_title) or self.lesson
        return f"{title}: {short}"

    @property
    def percent_right(self) -> float:
        return round(100 * self.right / self.attempts, 1) if self.attempts else 0.0


@dataclass
class Analytics:
    exercises: list[ExerciseStats]  # most active first
    questions: list[QuestionStats]

    @property
    def active_exercises(self) -> list[ExerciseStats]:
        return [e for e in self.exercises if e.active]

    @property
    def untried_exercises(self) -> list[ExerciseStats]:
        return [e for e in self.exercises if not e.active]


def _attempts_to_first_pass(cohort: Cohort) -> dict[int, list[int]]:
    """{exercise_id: [graded attempts each passer needed, including the pass]}."""
    sub = Submission._meta.db_table
    mem = CohortMembership._meta.db_table
    sql = f"""
        SELECT exercise_id, MIN(n) FROM (
            SELECT exercise_id, user_id, status, ROW_NUMBER() OVER (
                PARTITION BY user_id, exercise_id ORDER BY created_at, id
            ) AS n
            FROM {sub}
            WHERE status IN (%s, %s)
              AND user_id IN (SELECT user_id FROM {mem} WHERE cohort_id = %s)
        ) ranked
        WHERE status = %s
        GROUP BY exercise_id, user_id
    """  # noqa: S608 - table names come from model metadata, values are params
    params = [*GRADED, cohort.pk, Submission.Status.PASSED]
    needed: dict[int, list[int]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for exercise_id, n in cursor.fetchall():
            needed[exercise_id].append(n)
    return needed


def _diagnoses(cohort: Cohort) -> dict[int, list[DiagnosisCount]]:
    """The most common failure diagnoses per exercise among the cohort."""
    counts: dict[int, Counter] = defaultdict(Counter)
    learners: dict[tuple[int, str], set[int]] = defaultdict(set)
    failed = Submission.objects.filter(
        user_id__in=member_ids(cohort), status=Submission.Status.FAILED
    ).values_list("exercise_id", "user_id", "checks")
    for exercise_id, user_id, checks in failed.iterator(chunk_size=500):
        # One submission counts once per diagnosis, however many checks name it.
        seen = {
            c["diagnosis"]
            for c in checks or []
            if isinstance(c, dict) and not c.get("passed") and c.get("diagnosis")
        }
        for diagnosis in seen:
            counts[exercise_id][diagnosis] += 1
            learners[(exercise_id, diagnosis)].add(user_id)
    return {
        exercise_id: [
            DiagnosisCount(d, n, len(learners[(exercise_id, d)]))
            for d, n in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[
                :TOP_DIAGNOSES
            ]
        ]
        for exercise_id, counter in counts.items()
    }


def cohort_analytics(*, cohort: Cohort) -> Analytics:
    """Per exercise: attempts, learners, pass rate, median attempts to pass,
    top diagnoses. Per self-check: attempts and share right (difficulty)."""
    return Analytics(
        exercises=_exercise_stats(cohort), questions=_question_stats(cohort)
    )


def _exercise_stats(cohort: Cohort) -> list[ExerciseStats]:
    """Every published exercise with the cohort's graded attempts at it, the
    most active first (attempts, then learners), then in course order: the
    one exercise a cohort is working on must not hide among dozens of zeros."""
    totals = {
        row["exercise_id"]: row
        for row in Submission.objects.filter(
            user_id__in=member_ids(cohort), status__in=GRADED
        )
        .values("exercise_id")
        .annotate(
            attempts=Count("id"),
            learners=Count("user_id", distinct=True),
            learners_passed=Count(
                "user_id", filter=Q(status=Submission.Status.PASSED), distinct=True
            ),
        )
        .order_by()
    }
    needed = _attempts_to_first_pass(cohort)
    diagnoses = _diagnoses(cohort)
    exercises = []
    published = Exercise.objects.filter(published=True).select_related(
        "lesson__section"
    )
    for exercise in published:
        row = totals.get(exercise.pk, {})
        stats = ExerciseStats(
            slug=exercise.slug,
            title=exercise.title,
            lesson=exercise.lesson.slug if exercise.lesson else None,
            attempts=row.get("attempts", 0),
            learners=row.get("learners", 0),
            learners_passed=row.get("learners_passed", 0),
            diagnoses=diagnoses.get(exercise.pk, []),
            course_order=(
                (exercise.lesson.section.order, exercise.lesson.order)
                if exercise.lesson
                else (10**6, 0)  # not in a lesson: after the course's own
            ),
        )
        if needed.get(exercise.pk):
            stats.median_attempts_to_pass = float(
                statistics.median(needed[exercise.pk])
            )
        exercises.append(stats)
    exercises.sort(
        key=lambda e: (-e.attempts, -e.learners, e.course_order, e.title.lower())
    )
    return exercises


def _question_stats(cohort: Cohort) -> list[QuestionStats]:
    """The self-checks the cohort answered, hardest first."""
    questions = [
        QuestionStats(
            id=row["question_id"],
            lesson=row["question__lesson__slug"],
            lesson_title=row["question__lesson__title"],
            prompt=row["question__prompt"],
            kind=row["question__kind"],
            attempts=row["attempts"],
            learners=row["learners"],
            right=row["right"],
        )
        for row in QuestionAttempt.objects.filter(user_id__in=member_ids(cohort))
        .values(
            "question_id",
            "question__lesson__slug",
            "question__lesson__title",
            "question__prompt",
            "question__kind",
        )
        .annotate(
            attempts=Count("id"),
            learners=Count("user_id", distinct=True),
            right=Count("id", filter=Q(correct=True)),
        )
        .order_by()
    ]
    # Hardest first: the questions an instructor should look at.
    questions.sort(key=lambda q: (q.percent_right, -q.attempts, q.id))
    return questions
