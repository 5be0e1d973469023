"""Taking and cancelling a submission, for every client.

Every client (API, HTML form, scripts) submits through submission_create and
cancels through submission_cancel; the worker's half (claim, grade, save,
sweep) is grader.submission_grading and grader.dispatch.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from grading_engine.source import code_size, code_size_problem

from grader import events
from grader.budgets import exercise_lane
from grader.models import Exercise, Submission
from grader.submission_grading import submission_promote_next
from grader.submission_limits import SubmissionThrottled as SubmissionThrottled
from grader.submission_limits import outstanding_check, rate_take
from grader.tasks import wake_on_commit
from quiz.core.db_text import db_text_clean
from quiz.core.exam_mode import exercise_check

Status = Submission.Status


class SubmissionRejected(ValueError):
    """The submission cannot be accepted; the message is for the learner."""


class CancelRefused(Exception):  # noqa: N818 - reads as what happened
    """The submission is already finished; nothing was changed."""

    def __init__(self, status: str):
        self.status = status
        super().__init__(
            "it was already cancelled"
            if status == Status.CANCELLED
            else f"its grade already finished ({status})"
        )


def code_problem(code: str) -> str | None:
    """Why the grader would refuse this code, or None (also asked when a quiz
    saves a code answer, before it reaches the grader)."""
    # The engine words it, so `course check` refuses the same code the same way.
    too_big = code_size_problem(code_size(code), settings.SUBMISSION_MAX_BYTES)
    if too_big:
        return too_big
    if "\x00" in code:
        return "the code contains a NUL character"
    if db_text_clean(code) != code:
        return "the code contains an invalid character (a lone UTF-16 surrogate)"
    return None


def submission_create(
    *, user, exercise: Exercise, code: str, for_quiz: bool = False
) -> Submission:
    """Save a queued submission, then send its task once the row is committed.

    Every client (API, HTML form, scripts) comes through here, so the rate
    (SUBMISSION_RATE) and the cap on a learner's queued and running
    submissions (SUBMISSION_MAX_OUTSTANDING) hold whichever way code arrives:
    SubmissionThrottled (with retry_after) when either says no. ExamLocked
    while the learner sits a quiz that holds this exercise (its checks would
    answer the quiz), unless the quiz itself sends the code (`for_quiz`,
    once its feedback policy opens).
    """
    if not for_quiz:
        exercise_check(user, exercise.slug, "Submitting to this exercise")
    problem = code_problem(code)
    if problem:
        raise SubmissionRejected(problem)
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
            lane=exercise_lane(exercise),
            enqueued_at=timezone.now(),
        )
        wake_on_commit(str(submission.pk))
    return submission


def regrade_start(
    *,
    exercise: Exercise,
    requested_by,
    scope: str,
    user_ids: list[int] | None = None,
    cohort_id: int | None = None,
):
    """Regrade the exercise's graded submissions (of `user_ids`, or everyone's)
    in the background; returns the Regrade, whose rows show the progress."""
    from grader.regrade_grading import regrade_prepare

    with transaction.atomic():
        regrade = regrade_prepare(
            exercise=exercise,
            requested_by=requested_by,
            scope=scope,
            user_ids=user_ids,
            cohort_id=cohort_id,
        )
        wake_on_commit()
    return regrade


def submission_cancel(*, user, submission_id) -> Submission:
    """Cancel the learner's own queued or running submission.

    One conditional UPDATE decides: the row is `cancelled` (its grading slot
    free at once, any later verdict discarded) or it had already finished
    and CancelRefused says how. A running grade is then stopped wherever it
    runs (grader.cancellation). Another learner's id is Submission.DoesNotExist.
    """
    submission = Submission.objects.get(pk=submission_id, user=user)
    cancelled = Submission.objects.filter(
        pk=submission.pk, status__in=Submission.OUTSTANDING
    ).update(status=Status.CANCELLED, finished_at=timezone.now(), checks=[])
    submission.refresh_from_db()
    if not cancelled:
        raise CancelRefused(submission.status)
    events.cancel_requested(submission.pk)
    events.submission_changed(submission.pk)
    submission_promote_next(user_id=user.pk)
    wake_on_commit(str(submission.pk))  # the learner's next may go now
    return submission
