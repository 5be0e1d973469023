"""Writes for exercises and submissions (reads live in selectors.py).

Grading follows healthchecks' `sendalerts` pattern: a worker claims a row with
a conditional UPDATE, so two workers never grade one submission, and every
step is safe to repeat after a crash, a lost message or a database restart.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from datetime import timedelta

from django.conf import settings
from django.db import (
    InterfaceError,
    OperationalError,
    close_old_connections,
    transaction,
)
from django.db.models import F, Q
from django.utils import timezone

from grader import review_link
from grader.checks.result import CheckResult
from grader.db_text import db_text_clean
from grader.grading import Verdict, grade
from grader.models import Exercise, Submission
from grader.runners import runner_get
from grader.submission_limits import SubmissionThrottled as SubmissionThrottled
from grader.submission_limits import outstanding_check, rate_take
from quiz.upsert import upsert

log = logging.getLogger(__name__)
Status = Submission.Status

# A claim runs at most this many times; the next claim after that means the
# grader itself crashed twice on this row.
MAX_GRADING_ATTEMPTS = 2
CRASHED_TWICE = (
    "the grader crashed twice while grading this submission; this was not your "
    "code's fault. Please submit it again."
)


GRADER_FAILED = (
    "the grader failed before it could judge this submission; this was not your "
    "code's fault, and the team has been told. Please submit it again later."
)


class SubmissionRejected(ValueError):
    """The submission cannot be accepted; the message is for the learner."""


def exercise_upsert(*, record, source_path: str) -> str:
    """Create or update an exercise from a parsed content record.

    Returns "created", "updated" or "unchanged" for the loader's report.
    """
    from quiz.models import Lesson

    lesson = Lesson.objects.get(slug=record.lesson) if record.lesson else None
    values = {
        "lesson": lesson,
        "title": record.title.strip(),
        "harness": record.harness,
        "entry_point": record.entry_point,
        "signature": record.signature.strip(),
        "prompt": record.prompt,
        "starter": record.starter,
        "solution": record.solution,
        "wrong_solutions": record.wrong_solutions,
        "options": record.options,
        "source_path": source_path,
    }
    return upsert(Exercise, {"slug": record.slug}, values)


def exercise_grade(
    *,
    exercise: Exercise,
    code: str,
    seed: int | None = None,
    runner_kind: str | None = None,
) -> Verdict:
    """Grade `code` against `exercise` now, with this process's runner."""
    return grade(
        harness=exercise.harness,
        code=code,
        entry_point=exercise.entry_point,
        runner=runner_get(runner_kind),
        seed=seed,
        timeout=settings.GRADER_TIMEOUT_SECONDS,
        options=exercise.options,
    )


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
    from grader.tasks import grade_submission

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


def _worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_is_dead(claimed_by: str) -> bool:
    """True when the claiming process was on this host and no longer exists."""
    host, _, pid = claimed_by.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return int(pid) == os.getpid()  # our own earlier claim was interrupted


def with_db_retry(fn, *, seconds: float = 60.0):
    """Call `fn`, retrying while the database is unreachable (e.g. restarting)."""
    deadline = time.monotonic() + seconds
    delay = 0.2
    while True:
        try:
            return fn()
        except (OperationalError, InterfaceError):
            if time.monotonic() > deadline:
                raise
            log.warning("database unavailable; retrying in %.1fs", delay)
            close_old_connections()
            from django.db import connection

            connection.close()
            time.sleep(delay)
            delay = min(delay * 2, 3.0)


def _claim(submission_id: str) -> Submission | None:
    """Move the row to running for this worker; None when it is not ours to grade."""
    now = timezone.now()
    lease = timedelta(seconds=settings.GRADING_LEASE_SECONDS)
    row = (
        Submission.objects.filter(pk=submission_id)
        .values("status", "claimed_by", "started_at", "grading_attempts")
        .first()
    )
    if row is None or row["status"] in Submission.TERMINAL:
        return None
    if row["status"] == Status.RUNNING:
        expired = row["started_at"] is None or row["started_at"] < now - lease
        if not expired and not _owner_is_dead(row["claimed_by"]):
            return None  # someone is grading it right now
        if row["grading_attempts"] >= MAX_GRADING_ATTEMPTS:
            _finish_crashed(submission_id, row)
            return None
    claimed = Submission.objects.filter(
        pk=submission_id,
        status=row["status"],
        grading_attempts=row["grading_attempts"],
    ).update(
        status=Status.RUNNING,
        claimed_by=_worker_id(),
        started_at=now,
        grading_attempts=F("grading_attempts") + 1,
    )
    if not claimed:
        return None  # another worker won the race
    return Submission.objects.select_related("exercise").get(pk=submission_id)


def _finish_crashed(submission_id: str, row: dict) -> None:
    Submission.objects.filter(
        pk=submission_id,
        status=Status.RUNNING,
        grading_attempts=row["grading_attempts"],
    ).update(
        status=Status.ERROR,
        score=0.0,
        checks=[{"name": "grader", "passed": False, "message": CRASHED_TWICE}],
        finished_at=timezone.now(),
    )


def submission_grade(*, submission_id: str) -> str | None:
    """Grade one submission if it is ours to grade; return its final status."""
    submission = with_db_retry(lambda: _claim(submission_id))
    if submission is None:
        return None
    try:
        verdict = exercise_grade(
            exercise=submission.exercise, code=submission.code, seed=submission.seed
        )
    except Exception:  # noqa: BLE001 - a grader fault must still end the row
        log.exception("grading submission %s failed inside the grader", submission.pk)
        verdict = Verdict(
            "error",
            0.0,
            [CheckResult("grader", False, GRADER_FAILED)],
        )
    # PostgreSQL refuses NUL in text and jsonb and lone surrogates anywhere:
    # clean learner-controlled text once, here, or the save fails and the
    # row is re-graded until it "crashed twice".
    result = db_text_clean(verdict.to_dict())
    limit = settings.SUBMISSION_OUTPUT_MAX_CHARS

    def save() -> int:
        return Submission.objects.filter(
            pk=submission.pk,
            status=Status.RUNNING,
            grading_attempts=submission.grading_attempts,
        ).update(
            status=verdict.status,
            score=verdict.score,
            checks=result["checks"],
            stdout=result["stdout"][:limit],
            stderr=result["stderr"][:limit],
            grade_ms=verdict.duration_ms,
            finished_at=timezone.now(),
        )

    saved = with_db_retry(save)
    if saved and verdict.status == Status.FAILED:
        # After the verdict is committed; it logs and swallows its own errors.
        transaction.on_commit(
            lambda: review_link.submission_review_schedule_safely(
                submission_id=submission.pk
            )
        )
    return verdict.status


def submissions_sweep() -> int:
    """Re-send stale queued rows and running rows whose lease ran out.

    Covers lost messages (a Redis restart keeps nothing here) and workers that
    died mid-grade. Sending twice is harmless: the claim lets one through.
    """
    from grader.tasks import grade_submission

    now = timezone.now()
    stale_queue = now - timedelta(seconds=settings.SWEEP_QUEUED_AFTER_SECONDS)
    lease = now - timedelta(seconds=settings.GRADING_LEASE_SECONDS)
    stale = Submission.objects.filter(
        Q(status=Status.QUEUED, enqueued_at__lt=stale_queue)
        | Q(status=Status.RUNNING, started_at__lt=lease)
    )
    ids = [str(pk) for pk in stale.values_list("pk", flat=True)[:1000]]
    if not ids:
        return 0
    Submission.objects.filter(pk__in=ids, status=Status.QUEUED).update(enqueued_at=now)
    for submission_id in ids:
        grade_submission.apply_async(
            args=[submission_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
        )
    log.info("sweeper re-sent %d submissions", len(ids))
    return len(ids)
