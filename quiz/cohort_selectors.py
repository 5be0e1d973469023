"""Reads for instructors: their cohorts, the progress matrix, one learner's work.

Every read takes a constant number of queries whatever the cohort size:
counts are aggregated in the database per (learner, lesson) and assembled
here, never fetched learner by learner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet

from grader.models import Submission
from quiz.cohorts import join_code_normalize
from quiz.models import (
    Cohort,
    CohortMembership,
    Lesson,
    LessonRead,
    QuestionAttempt,
    Section,
)
from quiz.roles import INSTRUCTOR

# Submissions are graded in the worker; these are the learner's verdicts.
GRADED = (Submission.Status.PASSED, Submission.Status.FAILED)


class UnknownSection(ValueError):
    """A section filter names no section."""


def user_can_teach(user) -> bool:
    """Instructors (the group) and superusers reach the instructor tools."""
    if not user.is_authenticated:
        return False
    return user.is_superuser or user.groups.filter(name=INSTRUCTOR).exists()


def cohort_list(*, user) -> QuerySet[Cohort]:
    """The cohorts `user` may manage: their own; a superuser's view is all."""
    qs = Cohort.objects.select_related("owner").annotate(
        member_count=Count("memberships")
    )
    return qs if user.is_superuser else qs.filter(owner=user)


def cohort_get(*, user, cohort_id) -> Cohort:
    """One cohort `user` manages; Cohort.DoesNotExist otherwise (shown as 404)."""
    return cohort_list(user=user).get(pk=cohort_id)


def cohort_get_by_code(*, code: str) -> Cohort:
    return Cohort.objects.select_related("owner").get(
        join_code=join_code_normalize(code)
    )


def cohort_is_member(*, cohort: Cohort, user) -> bool:
    return CohortMembership.objects.filter(cohort=cohort, user=user).exists()


def cohort_members(*, cohort: Cohort) -> QuerySet[CohortMembership]:
    return (
        CohortMembership.objects.filter(cohort=cohort)
        .select_related("user")
        .order_by("user__username")
    )


def cohort_member_get(*, cohort: Cohort, user_id) -> CohortMembership:
    """The membership of `user_id` in `cohort`; DoesNotExist if not a member."""
    return cohort_members(cohort=cohort).get(user_id=user_id)


def member_ids(cohort: Cohort) -> QuerySet:
    """The cohort's learners as a subquery (never a Python list of ids)."""
    return CohortMembership.objects.filter(cohort=cohort).values("user_id")


# The progress matrix ---------------------------------------------------------


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
    rows = [
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
    used = _sort_rows(rows, sort or "learner", lessons)
    return Matrix(
        sections=list(groups.values()),
        lessons=lessons,
        rows=rows,
        sort=used,
        section=section,
        all_sections=all_sections,
    )


# One learner -----------------------------------------------------------------

DRILLDOWN_LIMIT = 100


@dataclass
class LearnerWork:
    membership: CohortMembership
    lessons_read: int
    attempts: list[QuestionAttempt]
    submissions: list[Submission]


def learner_work(*, cohort: Cohort, user_id) -> LearnerWork:
    """A member's latest self-check attempts and submissions (DoesNotExist if
    they are not in `cohort`)."""
    membership = cohort_member_get(cohort=cohort, user_id=user_id)
    attempts = (
        QuestionAttempt.objects.filter(user_id=user_id)
        .select_related("question__lesson")
        .order_by("-created_at")[:DRILLDOWN_LIMIT]
    )
    submissions = (
        Submission.objects.filter(user_id=user_id)
        .select_related("exercise")
        .order_by("-created_at")[:DRILLDOWN_LIMIT]
    )
    return LearnerWork(
        membership=membership,
        lessons_read=LessonRead.objects.filter(user_id=user_id).count(),
        attempts=list(attempts),
        submissions=list(submissions),
    )


def cohort_submissions(*, cohort: Cohort) -> QuerySet[Submission]:
    """Every submission of the cohort's current members, newest first."""
    return (
        Submission.objects.filter(user_id__in=member_ids(cohort))
        .select_related("exercise", "user")
        .order_by("-created_at")
    )


def failed_checks(submission: Submission) -> list[dict]:
    """The checks a submission failed, each with its diagnosis or None."""
    return [
        {
            "name": check.get("name", ""),
            "diagnosis": check.get("diagnosis") or None,
            "message": check.get("message", ""),
        }
        for check in submission.checks or []
        if isinstance(check, dict) and not check.get("passed")
    ]
