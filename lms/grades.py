"""Assignment and quiz scores to the LMS (Assignment and Grade Services).

`learner_scores_refresh` runs after anything that may change a learner's
work (quiz.core.score_events): it recomputes their score in each assignment
and each quiz of each LMS-linked cohort (a quiz's own score, by its rule
over the submitted attempts, as the gradebook's quiz column shows it) and,
where the score changed, records it (a new version) for `score_send`.
Sending holds the row's lock, always sends the newest version with the time
it was computed, and records what it sent, so a retry after a failure, a
duplicate task or a second worker never sends a score twice or an older
score after a newer one. An LMS that is down (5xx, 429, timeouts) raises
LmsUnavailable for Celery to retry with backoff; one that refuses the score
(other 4xx) marks the row failed, shown to the instructor, until the score
changes again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime

from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem as AgsLineItem
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException

from lms.models import LineItem, LmsAccount, LmsCourse, ScoreDelivery, ScoreSync
from lms.tool import TimeoutSession, tool_key
from teaching.assignments.gradebook import percent, quiz_column
from teaching.assignments.scoring import assignment_scores, quiz_scores
from teaching.models import Assignment, AssignmentItem
from teaching.quizzes.models import Quiz

SCORE_MAXIMUM = 100.0
AGS_SCOPES = [
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
]


class LmsUnavailable(Exception):
    """The LMS did not answer, or answered 5xx/429: worth retrying later."""


def line_item_spec(*, assignment_id=None, quiz_id=None, title: str) -> AgsLineItem:
    """An assignment's (or a quiz's) gradebook column, as deep links carry it
    and as AGS makes it; scores find it again by this resourceId
    (`assignment-ID` or `quiz-ID`)."""
    kind, key = (
        ("quiz", quiz_id) if quiz_id is not None else ("assignment", assignment_id)
    )
    return (
        AgsLineItem()
        .set_label(title[:255])
        .set_score_maximum(SCORE_MAXIMUM)
        .set_resource_id(f"{kind}-{key}")
        .set_tag(f"gpt2-course-{kind}")
    )


def _source_key(source: Assignment | Quiz) -> dict:
    """The row fields that name an assignment or a quiz."""
    if isinstance(source, Quiz):
        return {"quiz": source}
    return {"assignment": source}


def courses_publishing_to(user_id: int):
    return LmsCourse.objects.filter(
        cohort__memberships__user_id=user_id,
        context__can_publish_scores=True,
        context__deployment__is_active=True,
        context__deployment__registration__is_active=True,
    ).select_related("context__deployment__registration", "cohort")


def _lms_user_id(course: LmsCourse, user_id: int) -> str | None:
    """The learner's `sub` at this course's LMS (launches and rosters link it)."""
    return (
        LmsAccount.objects.filter(
            issuer=course.context.deployment.registration.issuer, user_id=user_id
        )
        .values_list("sub", flat=True)
        .first()
    )


def learner_scores_refresh(user_id: int) -> list[int]:
    """Record changed scores of one learner; the ids of rows now waiting to go."""
    waiting = []
    for course in courses_publishing_to(user_id):
        lms_user = _lms_user_id(course, user_id)
        if lms_user is None:
            continue  # joined with a code, never seen by this LMS
        now = timezone.now()  # no LMS column before it opens
        sources = [
            *Assignment.objects.filter(
                cohort=course.cohort, archived_at__isnull=True, opens_at__lte=now
            ),
            # A quiz an assignment holds goes inside that assignment's
            # score: one LMS column per quiz, not two.
            *Quiz.objects.filter(
                ~Exists(
                    AssignmentItem.objects.filter(
                        quiz=OuterRef("pk"), assignment__archived_at__isnull=True
                    )
                ),
                cohort=course.cohort,
                archived_at__isnull=True,
                opens_at__lte=now,
            ),
        ]
        for source in sources:
            row = _record(course, source, user_id, lms_user)
            if row is not None and row.pending:
                waiting.append(row.pk)
    return waiting


def _score(source: Assignment | Quiz, user_id: int, username: str) -> float:
    """The learner's score (0-1) as the gradebook shows it: an assignment's,
    or a quiz's own (0 without a submitted attempt whose feedback policy has
    released its score: quizzes.policy)."""
    if isinstance(source, Quiz):
        return quiz_scores([source], [user_id])[(user_id, source.pk)] or 0.0
    return assignment_scores(source, [(user_id, username)])[0].score


def _record(
    course, source: Assignment | Quiz, user_id: int, lms_user: str
) -> ScoreSync | None:
    """Recompute and store one score, under its row's lock.

    The score is computed while the row is locked, so of two refreshes at
    once the later one reads the later work: a stale score never overwrites
    a newer one.
    """
    member = (
        course.cohort.memberships.filter(user_id=user_id).select_related("user").first()
    )
    if member is None:
        return None
    key = {"course": course, **_source_key(source), "learner_id": user_id}
    with transaction.atomic():
        ScoreSync.objects.get_or_create(
            **key,
            defaults={"lms_user_id": lms_user, "score": 0.0,
                      "computed_at": timezone.now(), "version": 0},
        )  # fmt: skip
        row = ScoreSync.objects.select_for_update().get(**key)
        score = _score(source, user_id, member.user.username)
        if score_update(row, percent(score)) or row.lms_user_id != lms_user:
            row.lms_user_id = lms_user
            row.save()
    return row


def score_update(row: ScoreDelivery, score: float) -> bool:
    """Put a freshly computed score (0-100) on a locked row; False if unchanged.

    A new version waits to be sent. A first score of 0 is not sent: nothing
    done yet, the LMS shows no score, which is right; a 0 would read as
    "handed in nothing" before the due date.
    """
    if row.version == 0:
        row.version = 1
        row.sent_version = 1 if score == 0 else 0
    elif math.isclose(row.score, score, abs_tol=1e-9):
        return False
    else:
        row.version += 1
        row.failed = False
    row.score = score
    row.computed_at = timezone.now()
    return True


def _ags(course: LmsCourse) -> AssignmentsGradesService:
    context = course.context
    tool_key()
    registration = context.deployment.registration.to_registration()
    return AssignmentsGradesService(
        ServiceConnector(registration, TimeoutSession()),
        {"scope": AGS_SCOPES, "lineitems": context.lineitems_url},
    )


def line_item_for(course: LmsCourse, source: Assignment | Quiz, ags) -> str:
    """The assignment's (or quiz's) line item URL in this course: found by
    resourceId, or made."""
    known = LineItem.objects.filter(course=course, **_source_key(source))
    if known.exists():
        return known.get().url
    # One maker per course at a time, or two learners' first scores would
    # make two columns; the second finds the first's once it commits.
    list(LmsCourse.objects.select_for_update().filter(pk=course.pk))
    if known.exists():
        return known.get().url
    if isinstance(source, Quiz):
        wanted = line_item_spec(quiz_id=source.pk, title=quiz_column(source))
        ends = source.closes_at
    else:
        wanted = line_item_spec(assignment_id=source.pk, title=source.title)
        ends = source.due_at
    wanted.set_end_date_time(ends.isoformat())
    found = ags.find_or_create_lineitem(wanted, find_by="resource_id")
    url = found.get_id()
    if not url:
        raise LtiException("The LMS returned a line item without an id.")
    LineItem.objects.get_or_create(
        course=course, **_source_key(source), defaults={"url": url}
    )
    return url


def grade_for(row: ScoreDelivery) -> Grade:
    return (
        Grade()
        .set_score_given(row.score)
        .set_score_maximum(SCORE_MAXIMUM)
        .set_timestamp(_iso(row.computed_at))
        .set_activity_progress("Submitted")
        .set_grading_progress("FullyGraded")
        .set_user_id(row.lms_user_id)
    )


def _iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat(timespec="milliseconds")


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, RequestException):
        return True
    if isinstance(exc, LtiServiceException):
        status = exc.response.status_code
        return status >= 500 or status in (408, 429)
    return False


def score_send(sync_id: int) -> bool:
    """Send the newest version of one score if the LMS lacks it; True if sent."""
    return newest_send(
        # Not the assignment or quiz: nullable, they would be an outer join,
        # which FOR UPDATE refuses; `row.source` reads the one it names.
        ScoreSync.objects.select_related(
            "course__context__deployment__registration"
        ).filter(pk=sync_id),
        _assignment_put,
    )


def _assignment_put(row: ScoreSync) -> None:
    """Send an assignment's (or a quiz's) score to its line item."""
    ags = _ags(row.course)
    url = line_item_for(row.course, row.source, ags)
    try:
        ags.put_grade(grade_for(row), AgsLineItem({"id": url}))
    except LtiServiceException as exc:
        if exc.response.status_code != 404:
            raise
        # The line item was deleted in the LMS: make it again, once.
        LineItem.objects.filter(course=row.course, **_source_key(row.source)).delete()
        url = line_item_for(row.course, row.source, ags)
        ags.put_grade(grade_for(row), AgsLineItem({"id": url}))


def newest_send(rows, put: Callable[[ScoreDelivery], None]) -> bool:
    """Send a row's newest version with `put` and record how it went.

    The row is locked while it is sent, so of two senders the second finds
    it sent; an LMS that is down raises LmsUnavailable (after the attempt is
    recorded) for Celery to retry; one that refuses marks the row failed.
    """
    with transaction.atomic():
        row = rows.select_for_update().first()
        if row is None or not row.pending:
            return False
        version = row.version
        try:
            put(row)
        except (LtiException, RequestException, ValueError) as exc:
            row.attempts += 1
            row.last_error = str(exc)[:2000]
            row.failed = not _retryable(exc)
            row.save(update_fields=["attempts", "last_error", "failed"])
            failure = exc
        else:
            row.sent_version = version
            row.sent_at = timezone.now()
            row.attempts += 1
            row.last_error = ""
            row.save(
                update_fields=["sent_version", "sent_at", "attempts", "last_error"]
            )
            return True
    # Outside the transaction, so the attempt and its error stay recorded.
    if not row.failed:
        raise LmsUnavailable(row.last_error) from failure
    return False


def scores_waiting() -> list[int]:
    """Rows whose newest score has not reached the LMS (for the sweep)."""
    return list(
        ScoreSync.objects.filter(failed=False, sent_version__lt=F("version"))
        .order_by("pk")
        .values_list("pk", flat=True)[:1000]
    )
