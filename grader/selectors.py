"""Reads for exercises and submissions, with visibility rules in one place.

Each read takes a fixed number of queries, whatever the learner's history.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings
from django.db.models import Count, Q, QuerySet

from grader.models import Exercise, Submission
from quiz.core.providers import providers

Status = Submission.Status
GRADED = (Status.PASSED, Status.FAILED)  # an `error` was the grader's fault


class ViewerScope(Protocol):
    """Who else may see a learner's submissions: the ids of the learners whose
    work `user` may see (a subquery), or None. The teaching layer, above this
    one, provides "learners in my cohorts"; settings.SUBMISSION_VIEWER_SCOPES
    names the scopes (quiz.core.providers), and with none named a learner's
    work is theirs alone (and superusers')."""

    def __call__(self, user, /) -> QuerySet | None: ...


def exercise_list() -> QuerySet[Exercise]:
    return Exercise.objects.filter(published=True).select_related("lesson")


def exercise_get(*, slug: str) -> Exercise:
    return exercise_list().get(slug=slug)


def submissions_visible_to(user) -> QuerySet[Submission]:
    """Everyone sees their own; instructors also see the submissions of learners
    in cohorts they own (a subquery, so no duplicate rows); superusers see all."""
    qs = Submission.objects.select_related("exercise")
    if not user.is_authenticated:
        return qs.none()
    if user.is_superuser:
        return qs
    visible = Q(user=user)
    scopes: tuple[ViewerScope, ...] = providers("SUBMISSION_VIEWER_SCOPES")
    for scope in scopes:
        learner_ids = scope(user)
        if learner_ids is not None:
            visible |= Q(user_id__in=learner_ids)
    return qs.filter(visible)


def submission_get(*, user, submission_id) -> Submission:
    return submissions_visible_to(user).get(pk=submission_id)


def submission_queue_places(watched: dict[str, int]) -> dict[str, tuple[int, bool]]:
    """Queue position and "waits behind its own" of queued submissions, one query.

    `watched` maps submission id (text) -> its learner's id; a submission no
    longer queued is absent. Only a learner's own rows count: those running,
    and those queued ahead of it (sent earlier; one set aside goes behind the
    rest of its learner's line): see submission_queue_position and
    submission_waits_behind_own, which ask this for one submission. The
    event streams ask it for all they watch at once (grader.stream_hub).
    """
    rows = list(
        Submission.objects.filter(
            user_id__in=set(watched.values()), status__in=Submission.OUTSTANDING
        ).values_list("pk", "user_id", "status", "set_aside", "created_at")
    )
    queued = Submission.Status.QUEUED
    by_user = defaultdict(list)
    for _pk, user_id, status, set_aside, created in rows:
        by_user[user_id].append((status, (set_aside, created)))
    places = {}
    for pk, user_id, status, set_aside, created in rows:
        if str(pk) in watched and status == queued:
            # A learner's line: running first, then queued in the order they
            # were sent, those set aside (likely loops) last (grader.dispatch).
            earlier = [
                s for s, key in by_user[user_id]
                if s != queued or key < (set_aside, created)
            ]  # fmt: skip
            ahead = sum(s == queued for s in earlier)
            places[str(pk)] = (ahead + 1, bool(earlier))
    return places


def _place(submission: Submission) -> tuple[int, bool] | None:
    if submission.status != Submission.Status.QUEUED:
        return None
    key = str(submission.pk)
    return submission_queue_places({key: submission.user_id}).get(key)


def submission_queue_position(submission: Submission) -> int | None:
    """The submission's place among its owner's own queued submissions.

    1 = the owner's next one to be graded; None once a worker has it. Only
    the owner's rows are counted: a global position would tell every learner
    how many submissions everyone else has waiting (how busy the course is,
    when a classmate is working). With SUBMISSION_MAX_OUTSTANDING per learner
    it is a small number that says which of your submissions goes first.
    """
    place = _place(submission)
    return place[0] if place else None


# What a grade set aside (grader.lanes) waits for: room among the slow ones.
SET_ASIDE_WAIT = (
    "a slot for slow grades: it ran past its expected time while others "
    "waited, so it was set aside to run again at low priority"
)


def submission_waits_behind_own(submission: Submission) -> bool:
    """Queued behind an earlier submission of the same learner (queued or running).

    Such a submission waits for its learner's own line, not for a free
    grader: one learner never holds two grading slots.
    """
    place = _place(submission)
    return bool(place and place[1])


@dataclass(frozen=True)
class SolutionAccess:
    """Whether the reference solution is shown, and why (for the page's note)."""

    passed: bool
    graded: int
    needed: int

    @property
    def shown(self) -> bool:
        return self.passed or self.graded >= self.needed

    @property
    def remaining(self) -> int:
        return max(self.needed - self.graded, 0)


def solution_access(*, user, exercise: Exercise) -> SolutionAccess:
    """Shown after a pass or after SOLUTION_AFTER_ATTEMPTS graded attempts."""
    needed = settings.SOLUTION_AFTER_ATTEMPTS
    if not user.is_authenticated:
        return SolutionAccess(passed=False, graded=0, needed=needed)
    counts = Submission.objects.filter(user=user, exercise=exercise).aggregate(
        passed=Count("pk", filter=Q(status=Status.PASSED)),
        graded=Count("pk", filter=Q(status__in=GRADED)),
    )
    return SolutionAccess(
        passed=counts["passed"] > 0, graded=counts["graded"], needed=needed
    )


def attempt_history(*, user, exercise: Exercise, limit: int = 20) -> list[Submission]:
    """The learner's own latest attempts (never another learner's, even for admins)."""
    if not user.is_authenticated:
        return []
    return list(
        Submission.objects.filter(user=user, exercise=exercise)
        .only("pk", "status", "score", "checks", "created_at", "exercise_id")
        .order_by("-created_at")[:limit]
    )


def last_attempt(*, user, exercise: Exercise) -> Submission | None:
    """The learner's newest submission of `exercise` (its code opens the editor,
    so "Try again" starts from what they sent, not from the starter)."""
    if not user.is_authenticated:
        return None
    return (
        Submission.objects.filter(user=user, exercise=exercise)
        .only("pk", "code", "created_at")
        .order_by("-created_at", "-pk")
        .first()
    )


@dataclass(frozen=True)
class IndexEntry:
    exercise: Exercise
    status: str  # "passed", "attempted", "not started"; "" for visitors


@dataclass(frozen=True)
class IndexSection:
    title: str
    slug: str
    entries: list[IndexEntry]


def exercise_index(*, user) -> list[IndexSection]:
    """Published exercises grouped by their lesson's section, in course order,
    each with the learner's status; exercises without a lesson come last.
    Two queries, whatever the course's size."""
    exercises = sorted(
        exercise_list().select_related("lesson__section"),
        key=lambda e: (
            (0, e.lesson.section.order, e.lesson.order) if e.lesson else (1, 0, 0),
            e.title.lower(),
        ),
    )
    statuses = exercise_statuses(user=user)
    signed_in = user.is_authenticated
    sections: dict[str, IndexSection] = {}
    for exercise in exercises:
        section = exercise.lesson.section if exercise.lesson else None
        key = section.slug if section else ""
        if key not in sections:
            sections[key] = IndexSection(
                title=f"{section.order}. {section.title}"
                if section
                else "Other exercises",
                slug=key or "other",
                entries=[],
            )
        status = statuses.get(exercise.pk, "not started") if signed_in else ""
        sections[key].entries.append(IndexEntry(exercise=exercise, status=status))
    return list(sections.values())


def exercise_statuses(*, user, exercise: Exercise | None = None) -> dict[int, str]:
    """Each exercise the learner tried (or just `exercise`): "passed" (at
    least once) or "attempted", by exercise id, in one query; untried ones
    are absent."""
    if not user.is_authenticated:
        return {}
    rows = Submission.objects.filter(user=user)
    if exercise is not None:
        rows = rows.filter(exercise=exercise)
    rows = rows.values("exercise_id").annotate(
        passed=Count("pk", filter=Q(status=Status.PASSED))
    )
    return {
        row["exercise_id"]: "passed" if row["passed"] else "attempted" for row in rows
    }
