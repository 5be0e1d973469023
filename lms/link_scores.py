"""Scores for the line item an LMS made itself (docs/lti.md, "Grades back").

The commonest use of a tool in Canvas and Moodle is an LMS assignment whose
submission type is the tool, pointing at one exercise or lesson: the LMS
makes the line item and names it in each launch's AGS claim (`lineitem`).
A launch remembers it for that learner and resource link (`link_remember`);
after anything that may change the learner's work, `link_scores_refresh`
recomputes the linked exercise's or lesson's score (the gradebook's rules,
teaching.assignments.scoring) and records each change as a new version,
which goes out through the assignments' delivery path (lms.grades): the same
row lock, retries and "newest version only, once".
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from lti_tool.models import LtiDeployment
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.lineitem import LineItem as AgsLineItem
from pylti1p3.service_connector import ServiceConnector

from grader.models import Exercise
from lms.grades import grade_for, newest_send, score_update
from lms.models import LinkScore
from lms.targets import EXERCISE, LESSON, Target
from lms.tool import TimeoutSession, tool_key
from quiz.content.models import Lesson
from teaching.assignments.gradebook import percent
from teaching.assignments.scoring import exercise_score, lesson_score

AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
RESOURCE_LINK = "https://purl.imsglobal.org/spec/lti/claim/resource_link"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCORED_KINDS = (EXERCISE, LESSON)  # an assignment or quiz link has its own path


def _lineitem_url(claims: dict) -> str | None:
    """The launch's line item, if the LMS lets the tool post scores to it."""
    ags = claims.get(AGS_CLAIM)
    if not isinstance(ags, dict):
        return None
    url, scopes = ags.get("lineitem"), ags.get("scope")
    if not isinstance(url, str) or not isinstance(scopes, list):
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(url) > 1000:
        return None
    return url if SCORE_SCOPE in scopes else None


def link_remember(
    *, claims: dict, deployment: LtiDeployment, user, target: Target | None
) -> bool:
    """Remember the launch's line item for this learner and link; True if it
    is new or moved (its score is then worth computing now)."""
    url = _lineitem_url(claims)
    link = claims.get(RESOURCE_LINK)
    if url is None or target is None or target.kind not in SCORED_KINDS:
        return False
    if not isinstance(link, dict) or not str(link.get("id") or ""):
        return False
    row, created = LinkScore.objects.get_or_create(
        deployment=deployment,
        resource_link_id=str(link["id"])[:255],
        learner=user,
        defaults={
            "lineitem_url": url, "target": target.resource,
            "lms_user_id": str(claims["sub"])[:255], "score": 0.0,
            "computed_at": timezone.now(), "version": 0,
        },
    )  # fmt: skip
    if created:
        return True
    row = LinkScore.objects.select_for_update().get(pk=row.pk)
    if (row.lineitem_url, row.target) == (url, target.resource):
        return False
    # The link now points elsewhere: its score goes there, as a new version
    # (a 0 that was never sent stays unsent; the refresh computes it anew).
    row.lineitem_url, row.target = url, target.resource
    if row.version and row.score != 0:
        row.version += 1
        row.failed = False
    row.save()
    return True


def _score(row: LinkScore) -> float | None:
    """The linked resource's score, 0-100; None if it no longer exists."""
    kind, _, key = row.target.partition(":")
    model, score = {
        EXERCISE: (Exercise, exercise_score),
        LESSON: (Lesson, lesson_score),
    }.get(kind, (None, None))
    if model is None:
        return None
    found = model.objects.filter(slug=key).values_list("pk", flat=True).first()
    return None if found is None else percent(score(row.learner_id, found))


def link_scores_refresh(user_id: int) -> list[int]:
    """Record the learner's changed link scores; the ids of rows now waiting.

    Each score is computed under its row's lock, so of two refreshes at once
    the later one reads the later work.
    """
    waiting = []
    ids = LinkScore.objects.filter(
        learner_id=user_id,
        deployment__is_active=True,
        deployment__registration__is_active=True,
    ).values_list("pk", flat=True)
    for pk in list(ids):
        with transaction.atomic():
            row = LinkScore.objects.select_for_update().get(pk=pk)
            score = _score(row)
            if score is not None and score_update(row, score):
                row.save()
        if row.pending:
            waiting.append(row.pk)
    return waiting


def _link_put(row: LinkScore) -> None:
    tool_key()
    registration = row.deployment.registration.to_registration()
    ags = AssignmentsGradesService(
        ServiceConnector(registration, TimeoutSession()),
        {"scope": [SCORE_SCOPE], "lineitem": row.lineitem_url},
    )
    ags.put_grade(grade_for(row), AgsLineItem({"id": row.lineitem_url}))


def link_score_send(link_id: int) -> bool:
    """Send the newest version of one link's score if the LMS lacks it."""
    return newest_send(
        LinkScore.objects.select_related("deployment__registration").filter(pk=link_id),
        _link_put,
    )


def link_scores_waiting() -> list[int]:
    """Link scores whose newest version has not reached the LMS (the sweep)."""
    return list(
        LinkScore.objects.filter(failed=False, sent_version__lt=F("version"))
        .order_by("pk")
        .values_list("pk", flat=True)[:1000]
    )
