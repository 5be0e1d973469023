"""Accepting a verified launch: who it is, which course, where they land.

Everything here runs in the launch's transaction, after the token is
verified and before anyone is signed in: a launch that fails any check
leaves no user, no cohort and no LMS record behind.
"""

from __future__ import annotations

from dataclasses import dataclass

from lti_tool.models import LtiLaunch, LtiUser
from lti_tool.utils import sync_data_from_launch

from lms import accounts, courses, tool
from lms.link_scores import link_remember
from lms.targets import Target, target_from_launch
from lms.tool import LaunchRefused
from quiz.core.roles import INSTRUCTOR
from quiz.core.score_events import scores_changed

CONTEXT = "https://purl.imsglobal.org/spec/lti/claim/context"
ROLES = "https://purl.imsglobal.org/spec/lti/claim/roles"


@dataclass(frozen=True)
class LaunchResult:
    user: object
    launch_id: str
    deep_link: bool
    teaching: bool
    target: Target | None
    roster_course_id: int | None


def launch_accept(request) -> LaunchResult:
    message_launch = tool.launch_validate(request)
    lti_launch = LtiLaunch(message_launch)
    if not (lti_launch.is_resource_launch or lti_launch.is_deep_link_launch):
        raise LaunchRefused("This kind of LTI launch is not supported by this tool.")
    data = message_launch.get_launch_data()
    role = accounts.role_for(data.get(ROLES) or [])
    teaching = role == INSTRUCTOR
    if lti_launch.is_deep_link_launch and not teaching:
        raise LaunchRefused("Only instructors can add content to a course.", status=403)
    sync_data_from_launch(lti_launch)
    issuer = str(data["iss"])
    user = accounts.account_for(
        issuer=issuer, sub=str(data["sub"]), claims=data, role=role
    )
    LtiUser.objects.filter(pk=lti_launch.user.pk).update(auth_user=user)
    course = None
    if isinstance(data.get(CONTEXT), dict) and data[CONTEXT].get("id"):
        course = courses.course_for(
            lti_launch.context, instructor=user if teaching else None
        )
        if course is not None and not teaching:
            courses.learner_add(course, user)
    cohort_id = course.cohort_id if course else None
    target = target_from_launch(data, cohort_id=cohort_id)
    # Learners only: an instructor's score would be refused by the LMS.
    if (
        lti_launch.is_resource_launch
        and not teaching
        and link_remember(
            claims=data, deployment=lti_launch.deployment, user=user, target=target
        )
    ):
        scores_changed([user.pk])  # work done before this launch counts too
    return LaunchResult(
        user=user,
        launch_id=message_launch.get_launch_id(),
        deep_link=lti_launch.is_deep_link_launch,
        teaching=teaching,
        target=target,
        roster_course_id=course.pk if course is not None and teaching else None,
    )
