"""Taking a submission: its checks, the learner's budget, then its grading task.

Every client (API, HTML form, scripts) submits through submission_create; the
worker's half (claim, grade, save, sweep) is grader.submission_grading.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from grader.models import Exercise, Submission
from grader.submission_limits import SubmissionThrottled as SubmissionThrottled
from grader.submission_limits import outstanding_check, rate_take
from grader.tasks import grade_submission
from quiz.core.db_text import db_text_clean

Status = Submission.Status


class SubmissionRejected(ValueError):
    """The submission cannot be accepted; the message is for the learner."""


def submission_create(*, user, exercise: Exercise, code: str) -> Submission:
    """Save a queued submission, then send its task once the row is committed.

    Every client (API, HTML form, scripts) comes through here, so the rate
    (SUBMISSION_RATE) and the cap on a learner's queued and running
    submissions (SUBMISSION_MAX_OUTSTANDING) hold whichever way code arrives:
    SubmissionThrottled (with retry_after) when either says no.
    """
    if len(code.encode("utf-8", "surrogatepass")) > settings.SUBMISSION_MAX_BYTES:
        raise SubmissionRejected(
            f"the code is {len(code.encode('utf-8', 'surrogatepass')):,} bytes; "
            f"the limit is {settings.SUBMISSION_MAX_BYTES:,} bytes"
        )
    if "\x00" in code:
        raise SubmissionRejected("the code contains a NUL character")
    if db_text_clean(code) != code:
        raise SubmissionRejected(
            "the code contains an invalid character (a lone UTF-16 surrogate)"
        )
    rate_take(user_id=user.pk)
    with transaction.atomic():
        outstanding_check(
            user=user,
            outstanding_qs=Submission.objects.filter(
                user=user, status__in=(Status.QUEUED, Status.RUNNING)
            ),
        )
        submission = Submission.objects.create(
            user=user,
            exercise=exercise,
            code=code,
            seed=secrets.randbits(31),
            enqueued_at=timezone.now(),
        )
        grade_submission.apply_async_on_commit(
            args=[str(submission.pk)], queue=settings.CELERY_TASK_DEFAULT_QUEUE
        )
    return submission
