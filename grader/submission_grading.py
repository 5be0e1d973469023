"""Grading a queued submission in a worker: claim it, grade it, save the verdict.

This follows healthchecks' `sendalerts` pattern: a worker claims a row with a
conditional UPDATE, so two workers never grade one submission, and every
step is safe to repeat after a crash, a lost message or a database restart.
The Celery tasks call in here; nothing here sends a task (the sweep is handed
its sender), so this module and grader.tasks do not import each other.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
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
from grading_engine.checks.result import CheckResult
from grading_engine.grading import Verdict

from grader import failure_review
from grader.models import Submission
from grader.process_runner import exercise_grade
from quiz.core.db_text import db_text_clean

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
            lambda: failure_review.submission_review_schedule_safely(
                submission_id=submission.pk
            )
        )
    return verdict.status


def submissions_sweep(*, resend: Callable[[str], None]) -> int:
    """Re-send stale queued rows and running rows whose lease ran out.

    Covers lost messages (a Redis restart keeps nothing here) and workers that
    died mid-grade. Sending twice is harmless: the claim lets one through.
    `resend(submission_id)` sends the grading task (grader.tasks passes it).
    """
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
        resend(submission_id)
    log.info("sweeper re-sent %d submissions", len(ids))
    return len(ids)
