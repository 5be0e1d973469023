"""LMS courses as cohorts, and their rosters (Names and Role Provisioning).

A course becomes a cohort at its first instructor launch (that instructor
owns it; later instructors teach it too). Learners who launched before then
are in it from that moment. NRPS brings in everyone the LMS lists, launched
or not: at every instructor launch and when an instructor asks.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from lti_tool.models import LtiContext, LtiMembership
from pylti1p3.exception import LtiException
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from lms import accounts
from lms.models import LmsAccount, LmsCourse, ScoreSync
from lms.tool import TimeoutSession, tool_key
from quiz.core.roles import INSTRUCTOR
from teaching.cohorts import cohort_create
from teaching.models import CohortMembership
from teaching.selectors import cohorts_taught_ids

log = logging.getLogger(__name__)


class RosterError(Exception):
    """The roster could not be read; the message is for the instructor."""


def course_for(context: LtiContext, *, instructor=None) -> LmsCourse | None:
    """The course's cohort link; made when `instructor` is the first to come."""
    course = LmsCourse.objects.select_related("cohort").filter(context=context).first()
    if course is None:
        if instructor is None:
            return None
        with transaction.atomic():
            list(LtiContext.objects.select_for_update().filter(pk=context.pk))
            course = LmsCourse.objects.filter(context=context).first()
            if course is None:
                name = (context.title or context.label or "LMS course")[:200]
                cohort = cohort_create(owner=instructor, name=name)
                course = LmsCourse.objects.create(context=context, cohort=cohort)
                _add_known_learners(course)
    if instructor is not None and course.cohort.owner_id != instructor.pk:
        course.cohort.instructors.add(instructor)
    return course


def _add_known_learners(course: LmsCourse) -> None:
    """Learners of the context who launched before the cohort existed."""
    issuer = course.context.deployment.registration.issuer
    subs = LtiMembership.objects.filter(
        context=course.context, is_learner=True, is_active=True
    ).values_list("user__sub", flat=True)
    for account in LmsAccount.objects.filter(issuer=issuer, sub__in=list(subs)):
        learner_add(course, account.user)


def learner_add(course: LmsCourse, user) -> None:
    if user.pk != course.cohort.owner_id:
        CohortMembership.objects.get_or_create(cohort=course.cohort, user=user)


def roster_sync(course: LmsCourse) -> int:
    """Bring the LMS roster into the cohort; returns how many members it lists.

    Learners get accounts (linked by issuer and sub) and membership;
    instructors teach the cohort. People the LMS marks inactive, or no longer
    lists, keep their account and work but leave the cohort.
    """
    context = course.context
    if not context.memberships_url:
        raise RosterError(
            "The LMS did not offer its roster (Names and Role Provisioning) "
            "for this course."
        )
    registration = context.deployment.registration
    tool_key()
    nrps = NamesRolesProvisioningService(
        ServiceConnector(registration.to_registration(), TimeoutSession()),
        {"context_memberships_url": context.memberships_url},
    )
    try:
        members = nrps.get_members()
    except (LtiException, RequestException, ValueError) as exc:
        LmsCourse.objects.filter(pk=course.pk).update(roster_error=str(exc)[:2000])
        raise RosterError(f"The LMS did not give the roster: {exc}") from exc
    # django-lti reads both keys; NRPS lets "status" default to Active.
    members = [
        {**m, "status": m.get("status", "Active"), "roles": m.get("roles") or []}
        for m in members
        if isinstance(m, dict) and m.get("user_id")
    ]
    with transaction.atomic():
        context.update_memberships(members)
        listed = set()
        for member in members:
            sub = str(member.get("user_id") or "")
            if not sub:
                continue
            role = accounts.role_for(member.get("roles", []))
            user = accounts.account_for(
                issuer=registration.issuer, sub=sub, claims=member, role=role
            )
            if str(member.get("status", "Active")) != "Active":
                continue
            listed.add(user.pk)
            if role == INSTRUCTOR:
                if user.pk != course.cohort.owner_id:
                    course.cohort.instructors.add(user)
            else:
                learner_add(course, user)
        linked = LmsAccount.objects.filter(issuer=registration.issuer).values("user_id")
        CohortMembership.objects.filter(
            cohort=course.cohort, user_id__in=linked
        ).exclude(user_id__in=listed).delete()
        LmsCourse.objects.filter(pk=course.pk).update(
            roster_synced_at=timezone.now(), roster_error=""
        )
    return len(members)


def courses_taught(*, user):
    """The LMS courses whose cohort `user` owns or co-teaches (all, for a superuser)."""
    qs = LmsCourse.objects.select_related("cohort", "context")
    if user.is_superuser:
        return qs
    return qs.filter(cohort_id__in=cohorts_taught_ids(user))


def courses_status(*, user) -> list[dict]:
    """Each course with its roster sync and how its grades are getting on."""
    rows = []
    for course in courses_taught(user=user).order_by("cohort__name"):
        syncs = ScoreSync.objects.filter(course=course)
        rows.append(
            {
                "course": course,
                "sent": syncs.filter(sent_version=F("version")).count(),
                "waiting": syncs.filter(
                    failed=False, sent_version__lt=F("version")
                ).count(),
                "failed": list(
                    syncs.filter(failed=True).select_related(
                        "learner", "assignment", "quiz"
                    )[:20]
                ),
            }
        )
    return rows
