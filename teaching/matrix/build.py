"""The progress matrix: a cohort's learners x the course's lessons.

Per cell: read, self-checks right, exercises passed. Six queries whatever
the cohort's size: counts are aggregated in the database per (learner,
lesson) and assembled here, never fetched learner by learner. The page, its
CSV and its API (this package's views and csv_export, and
teaching.api's CohortMatrixView) all show this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from django.db.models import Count, Q

from grader.models import Submission
from quiz.content.models import Lesson, Section
from quiz.learning.models import LessonRead, QuestionAttempt
from teaching.models import Cohort
from teaching.selectors import cohort_members, member_ids


class UnknownSection(ValueError):
    """A section filter names no section."""


@dataclass
class LessonColumn:
    id: int
    slug: str
    title: str
    section_slug: str
    checks_total: int
    exercises_total: int


@dataclass
class SectionGroup:
    slug: str
    title: str
    lessons: list[LessonColumn] = field(default_factory=list)


@dataclass
class Cell:
    lesson: LessonColumn
    read: bool
    checks_right: int
    exercises_passed: int

    @property
    def sort_key(self) -> tuple[int, int, int]:
        return (self.exercises_passed, self.checks_right, int(self.read))


@dataclass
class MatrixRow:
    user_id: int
    username: str
    cells: list[Cell]

    @property
    def lessons_read(self) -> int:
        return sum(c.read for c in self.cells)

    @property
    def checks_right(self) -> int:
        return sum(c.checks_right for c in self.cells)

    @property
    def exercises_passed(self) -> int:
        return sum(c.exercises_passed for c in self.cells)


@dataclass
class Matrix:
    sections: list[SectionGroup]
    lessons: list[LessonColumn]
    rows: list[MatrixRow]
    sort: str
    section: str | None
    all_sections: list[Section]

    @property
    def checks_total(self) -> int:
        return sum(les.checks_total for les in self.lessons)

    @property
    def exercises_total(self) -> int:
        return sum(les.exercises_total for les in self.lessons)


SORT_FIXED = ("learner", "read", "checks", "exercises")


def _sort_rows(rows: list[MatrixRow], sort: str, lessons: list[LessonColumn]) -> str:
    """Sort in place by `sort` ("name" ascending, "-name" descending).

    Names: learner, read, checks, exercises (the totals) or a lesson slug
    (by exercises passed, then self-checks right, then read). Unknown names
    fall back to "learner" and the name actually used is returned.
    """
    descending = sort.startswith("-")
    name = sort.lstrip("-")
    index = {les.slug: i for i, les in enumerate(lessons)}
    if name == "learner":
        key = lambda r: r.username.lower()  # noqa: E731
    elif name == "read":
        key = lambda r: (r.lessons_read, r.username.lower())  # noqa: E731
    elif name == "checks":
        key = lambda r: (r.checks_right, r.username.lower())  # noqa: E731
    elif name == "exercises":
        key = lambda r: (r.exercises_passed, r.username.lower())  # noqa: E731
    elif name in index:
        i = index[name]
        key = lambda r: (r.cells[i].sort_key, r.username.lower())  # noqa: E731
    else:
        name, descending = "learner", False
        key = lambda r: r.username.lower()  # noqa: E731
    rows.sort(key=key, reverse=descending)
    return f"-{name}" if descending else name


def progress_matrix(
    *, cohort: Cohort, section: str | None = None, sort: str = "learner"
) -> Matrix:
    """Learners x lessons: read, self-checks right, exercises passed.

    A self-check counts as right when the learner has answered it right at
    least once (recall questions are self-rated). Six queries in all.
    """
    all_sections = list(Section.objects.order_by("order"))
    section = section or None
    if section and section not in {s.slug for s in all_sections}:
        raise UnknownSection(f"No section named {section!r}.")
    lessons, groups = _lesson_columns(section)
    rows = _member_rows(cohort, lessons)
    used = _sort_rows(rows, sort or "learner", lessons)
    return Matrix(
        sections=groups,
        lessons=lessons,
        rows=rows,
        sort=used,
        section=section,
        all_sections=all_sections,
    )


def progress_matrix_for(*, cohort: Cohort, query: Mapping[str, str]) -> Matrix:
    """The matrix a page, CSV or API request asks for with ?section= and ?sort=."""
    return progress_matrix(
        cohort=cohort,
        section=query.get("section"),
        sort=query.get("sort", "learner"),
    )


def _lesson_columns(
    section: str | None,
) -> tuple[list[LessonColumn], list[SectionGroup]]:
    """The lessons (of one section, or all) in course order, with their totals."""
    lessons_qs = (
        Lesson.objects.select_related("section")
        .annotate(
            checks_total=Count("questions", distinct=True),
            exercises_total=Count(
                "exercises", filter=Q(exercises__published=True), distinct=True
            ),
        )
        .order_by("section__order", "order")
    )
    if section:
        lessons_qs = lessons_qs.filter(section__slug=section)
    lessons: list[LessonColumn] = []
    groups: dict[str, SectionGroup] = {}
    for lesson in lessons_qs:
        column = LessonColumn(
            id=lesson.id,
            slug=lesson.slug,
            title=lesson.title,
            section_slug=lesson.section.slug,
            checks_total=lesson.checks_total,
            exercises_total=lesson.exercises_total,
        )
        lessons.append(column)
        group = groups.setdefault(
            lesson.section.slug, SectionGroup(lesson.section.slug, lesson.section.title)
        )
        group.lessons.append(column)
    return lessons, list(groups.values())


def _member_rows(cohort: Cohort, lessons: list[LessonColumn]) -> list[MatrixRow]:
    """One row per member, a cell per lesson, from three aggregate queries."""
    lesson_ids = [les.id for les in lessons]
    members = member_ids(cohort)
    read = set(
        LessonRead.objects.filter(
            user_id__in=members, lesson_id__in=lesson_ids
        ).values_list("user_id", "lesson_id")
    )
    right = {
        (row["user_id"], row["question__lesson_id"]): row["n"]
        for row in QuestionAttempt.objects.filter(
            user_id__in=members, correct=True, question__lesson_id__in=lesson_ids
        )
        .values("user_id", "question__lesson_id")
        .annotate(n=Count("question_id", distinct=True))
        .order_by()
    }
    passed = {
        (row["user_id"], row["exercise__lesson_id"]): row["n"]
        for row in Submission.objects.filter(
            user_id__in=members,
            status=Submission.Status.PASSED,
            exercise__published=True,
            exercise__lesson_id__in=lesson_ids,
        )
        .values("user_id", "exercise__lesson_id")
        .annotate(n=Count("exercise_id", distinct=True))
        .order_by()
    }
    return [
        MatrixRow(
            user_id=m.user_id,
            username=m.user.username,
            cells=[
                Cell(
                    lesson=les,
                    read=(m.user_id, les.id) in read,
                    checks_right=right.get((m.user_id, les.id), 0),
                    exercises_passed=passed.get((m.user_id, les.id), 0),
                )
                for les in lessons
            ],
        )
        for m in cohort_members(cohort=cohort)
    ]
