"""Reads for instructors: their cohorts, their members, one learner's work.

Every read takes a constant number of queries whatever the cohort size (the
progress matrix is teaching.matrix).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from grader.models import Submission
from quiz.core.params import id_in_range
from quiz.core.roles import INSTRUCTOR
from quiz.learning.models import LessonRead, QuestionAttempt
from teaching.cohorts import join_code_normalize
from teaching.models import Assignment, Cohort, CohortMembership


def user_can_teach(user) -> bool:
    """Instructors (the group) and superusers reach the instructor tools."""
    if not user.is_authenticated:
        return False
    return user.is_superuser or user.groups.filter(name=INSTRUCTOR).exists()


def cohort_list(*, user) -> QuerySet[Cohort]:
    """The cohorts `user` may manage: theirs (owned or co-taught); a
    superuser's view is all."""
    qs = Cohort.objects.select_related("owner").annotate(
        member_count=Count("memberships")
    )
    return qs if user.is_superuser else qs.filter(pk__in=cohorts_taught_ids(user))


def cohorts_taught_ids(user) -> QuerySet:
    """Ids of the cohorts `user` owns or co-teaches, as a subquery."""
    taught = Cohort.instructors.through.objects.filter(user_id=user.pk)
    return Cohort.objects.filter(
        Q(owner_id=user.pk) | Q(pk__in=taught.values("cohort_id"))
    ).values("pk")


def cohort_get(*, user, cohort_id) -> Cohort:
    """One cohort `user` manages; Cohort.DoesNotExist otherwise (shown as 404)."""
    return cohort_list(user=user).get(pk=cohort_id)


def assignment_get(*, user, assignment_id) -> Assignment:
    """An assignment of a cohort `user` teaches; DoesNotExist otherwise (a 404),
    also for an id past the column's range."""
    if not id_in_range(assignment_id):
        raise Assignment.DoesNotExist
    qs = Assignment.objects.select_related("cohort")
    if not user.is_superuser:
        qs = qs.filter(cohort_id__in=cohorts_taught_ids(user))
    return qs.get(pk=assignment_id)


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


def learners_taught_by(user) -> QuerySet:
    """The learners in cohorts `user` teaches, as a subquery of user ids: whose
    submissions an instructor may open (settings.SUBMISSION_VIEWER_SCOPES)."""
    return CohortMembership.objects.filter(
        cohort_id__in=cohorts_taught_ids(user)
    ).values("user_id")


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
