"""Grading a queued submission in a worker: claim it, grade it, save the verdict.

This follows healthchecks' `sendalerts` pattern: a worker claims a row with a
conditional UPDATE, so two workers never grade one submission, and every
step is safe to repeat after a crash, a lost message or a database restart.
A partial unique index (one `running` row per learner) makes "one grading
slot per learner" a database fact: a second claim for the same learner
fails whatever the workers do. Which row to claim next is grader.dispatch's
choice, and the sweep lives there too; nothing here sends a task, so this
module and grader.tasks do not import each other.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import (
    IntegrityError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    transaction,
)
from django.db.models import F, Q
from django.utils import timezone
from grading_engine.checks.result import CheckResult
from grading_engine.grading import Verdict
from grading_engine.runner import Slow

from grader import budgets, events, failure_review, metrics
from grader.cancellation import running_grades
from grader.models import Exercise, Submission
from grader.process_runner import exercise_grade
from quiz.core.db_text import db_text_clean
from quiz.core.score_events import scores_changed

log = logging.getLogger(__name__)
Status = Submission.Status

# A claim runs at most this many times; a row abandoned that often means the
# grader itself crashed on it.
MAX_GRADING_ATTEMPTS = 2
CRASHED_TWICE = (
    "the grader crashed twice while grading this submission; this was not your "
    "code's fault. Please submit it again."
)
GRADER_FAILED = (
    "the grader failed before it could judge this submission; this was not your "
    "code's fault, and the team has been told. Please submit it again later."
)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(claimed_by: str) -> bool:
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
    return False


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


def claim(submission_id) -> Submission | None:
    """Move a queued row to running for this worker; None when not ours.

    Safe to retry when the database goes away mid-claim: the row is read
    inside the claiming transaction, so an error before COMMIT leaves it
    queued, and a COMMIT whose reply was lost is recognised on the retry by
    this claim's own start time. Either way the row is never left "running"
    under a live worker that does not know it holds it, which would stall
    its learner's queue until the lease ran out.
    """
    stamp = timezone.now()
    tries = 0

    def attempt() -> Submission | None:
        nonlocal tries
        tries += 1
        if tries > 1:
            ours = _claimed_at(submission_id, stamp)
            if ours is not None:
                return ours
        return _claim_once(submission_id, stamp)

    submission = with_db_retry(attempt)
    if submission is not None:
        events.submission_changed(submission_id)
    return submission


def _mine(stamp) -> dict:
    return {"status": Status.RUNNING, "claimed_by": worker_id(), "started_at": stamp}


def _claimed_at(submission_id, stamp) -> Submission | None:
    """The row if a claim stamped `stamp` by this worker did commit."""
    rows = Submission.objects.select_related("exercise")
    return rows.filter(pk=submission_id, **_mine(stamp)).first()


def _claim_once(submission_id, stamp) -> Submission | None:
    try:
        with transaction.atomic():
            claimed = Submission.objects.filter(
                pk=submission_id, status=Status.QUEUED
            ).update(**_mine(stamp), grading_attempts=F("grading_attempts") + 1)
            if not claimed:
                return None  # another worker won the race, or it was cancelled
            return Submission.objects.select_related("exercise").get(pk=submission_id)
    except IntegrityError:
        return None  # its learner has a grade running already (another worker)


def submission_grade(*, submission_id) -> str | None:
    """Claim this one submission and grade it; its final status, or None."""
    submission = claim(submission_id)
    if submission is None:
        return None
    return grade_claimed(submission)


def grade_claimed(
    submission: Submission,
    *,
    slow: Slow | None = None,
    set_aside: threading.Event | None = None,
) -> str | None:
    """Grade a row this worker claimed and save the verdict (if still running).

    `slow` is told when the grade runs longer than expected (grader.lanes);
    if the grade is stopped because `set_aside` was set, the row is queued
    again instead of ending (grader.dispatch).
    """
    # Every database step retries: an error escaping here would leave the row
    # "running" under a live worker, and the learner's queue stuck behind it.
    budget = with_db_retry(lambda: exercise_budget_measured(submission.exercise))
    with_db_retry(
        lambda: Submission.objects.filter(
            pk=submission.pk, status=Status.RUNNING
        ).update(time_budget_seconds=budget.seconds)
    )
    with running_grades.watch(submission.pk) as cancel:
        try:
            verdict = exercise_grade(
                exercise=submission.exercise,
                code=submission.code,
                seed=submission.seed,
                budget=budget,
                cancel=cancel,
                slow=slow,
            )
        except Exception:  # noqa: BLE001 - a grader fault must still end the row
            log.exception("grading submission %s failed in the grader", submission.pk)
            verdict = Verdict(
                "error", 0.0, [CheckResult("grader", False, GRADER_FAILED)]
            )
    if verdict.status == Status.CANCELLED:
        if set_aside is not None and set_aside.is_set():
            with_db_retry(lambda: submission_set_aside(submission))
            return Status.QUEUED
        return Status.CANCELLED  # the learner's cancel already ended the row
    saved = with_db_retry(lambda: _save(submission, verdict))
    if not saved:
        return None  # cancelled (or re-queued) while we graded: theirs stands
    with_db_retry(lambda: submission_promote_next(user_id=submission.user_id))
    metrics.grade_recorded(
        exercise=submission.exercise.slug, lane=submission.lane, verdict=verdict
    )
    events.submission_changed(submission.pk)
    scores_changed([submission.user_id])
    if verdict.status == Status.FAILED:
        # After the verdict is committed; it logs and swallows its own errors.
        transaction.on_commit(
            lambda: failure_review.submission_review_schedule_safely(
                submission_id=submission.pk
            )
        )
    return verdict.status


def _save(submission: Submission, verdict: Verdict) -> int:
    # PostgreSQL refuses NUL in text and jsonb and lone surrogates anywhere:
    # clean learner-controlled text once, here, or the save fails and the
    # row is re-graded until it "crashed twice".
    result = db_text_clean(verdict.to_dict())
    limit = settings.SUBMISSION_OUTPUT_MAX_CHARS
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
        exercise_version=submission.exercise.version,
    )


def _held_here(submission: Submission):
    """The row while this worker's claim of it still stands."""
    return Submission.objects.filter(
        pk=submission.pk,
        status=Status.RUNNING,
        claimed_by=worker_id(),
        grading_attempts=submission.grading_attempts,
    )


def submission_release(submission: Submission) -> int:
    """Put a row this worker claimed back in the queue (its grade failed to end)."""
    released = _held_here(submission).update(
        status=Status.QUEUED, claimed_by="", enqueued_at=timezone.now()
    )
    if released:
        events.submission_changed(submission.pk)
    return released


def submission_set_aside(submission: Submission) -> int:
    """Queue a grade stopped as a likely loop again, behind everyone ready.

    Not a crash: the claim it used is given back. A learner's cancel that
    came first stands (the row is no longer running).
    """
    moved = _held_here(submission).update(
        status=Status.QUEUED,
        claimed_by="",
        started_at=None,
        set_aside=True,
        enqueued_at=timezone.now(),
        grading_attempts=F("grading_attempts") - 1,
    )
    if moved:
        submission_promote_next(user_id=submission.user_id)
        metrics.grade_set_aside()
        events.submission_changed(submission.pk)
    return moved


def submission_promote_next(*, user_id: int) -> None:
    """Put the learner's next queued submission at the back of the queue.

    It waited behind their own; from now it waits behind everyone else's
    that are ready, so a learner with ten queued takes turns with the others
    instead of keeping a slot.
    """
    next_pk = (
        Submission.objects.filter(user_id=user_id, status=Status.QUEUED)
        .order_by("set_aside", "created_at")  # a set-aside one last (dispatch)
        .values_list("pk", flat=True)
        .first()
    )
    if next_pk is not None:
        Submission.objects.filter(pk=next_pk, status=Status.QUEUED).update(
            enqueued_at=timezone.now()
        )


# -- budgets ------------------------------------------------------------------

_measuring: dict[int, threading.Lock] = {}
_measuring_lock = threading.Lock()
_unmeasurable: dict[int, float] = {}  # exercise id -> when to try again
RETRY_MEASURING_SECONDS = 600


def exercise_budget_measured(exercise: Exercise) -> budgets.Budget:
    """The exercise's budget, measuring its reference first if it never was.

    Measured once per exercise (the first grade after it was loaded or its
    harness, solution or options changed) with this worker's warm runner;
    the other threads of this process wait for that one measurement. A
    reference that fails to run leaves the cap in force, and is tried again
    only after RETRY_MEASURING_SECONDS.
    """
    if not budgets.needs_measuring(exercise) or settings.GRADER_RUNNER != "pool":
        return budgets.exercise_budget(exercise)
    with _measuring_lock:
        lock = _measuring.setdefault(exercise.pk, threading.Lock())
    with lock:
        exercise.refresh_from_db()
        due = _unmeasurable.get(exercise.pk, 0.0) <= time.monotonic()
        if budgets.needs_measuring(exercise) and due:
            from grader.process_runner import runner_get
            from grader.verify import exercise_measure

            if exercise_measure(exercise=exercise, runner=runner_get()):
                _unmeasurable.pop(exercise.pk, None)
            else:
                _unmeasurable[exercise.pk] = time.monotonic() + RETRY_MEASURING_SECONDS
    return budgets.exercise_budget(exercise)


def exercises_measure_unmeasured() -> int:
    """Measure every published exercise that has no budget yet (worker start).

    So the first learners after a deploy meet measured budgets, and the
    judge's own reference models are built before anyone waits on them. It
    yields to learners: each measurement waits until this worker grades
    nothing, and a grade that arrives first measures its own exercise (or
    waits for this measurement of it).
    """
    from grader.lanes import lanes_get

    pending = Exercise.objects.filter(
        published=True, time_budget_seconds__isnull=True
    ).order_by("slug")
    measured = 0
    for exercise in pending:
        while lanes_get().busy():
            time.sleep(0.05)
        if budgets.needs_measuring(exercise):
            measured += exercise_budget_measured(exercise).why != budgets.UNMEASURED
    return measured


# -- recovery -----------------------------------------------------------------


def submissions_requeue_abandoned(*, local_only: bool = False) -> int:
    """Put running rows whose worker is gone back in the queue.

    A row is abandoned when its lease ran out, or (on this host) when the
    process that claimed it no longer exists: a worker that was killed or
    crashed mid-grade. After MAX_GRADING_ATTEMPTS claims it ends as an error
    instead, since the grader itself keeps failing on it.
    """
    lease = timezone.now() - timedelta(seconds=settings.GRADING_LEASE_SECONDS)
    rows = Submission.objects.filter(status=Status.RUNNING)
    if local_only:
        rows = rows.filter(claimed_by__startswith=f"{socket.gethostname()}:")
    else:
        rows = rows.filter(Q(started_at__lt=lease) | Q(started_at__isnull=True))
    moved = 0
    for row in rows.values("pk", "claimed_by", "grading_attempts", "user_id")[:1000]:
        if local_only and not owner_is_dead(row["claimed_by"]):
            continue
        mine = Submission.objects.filter(
            pk=row["pk"],
            status=Status.RUNNING,
            grading_attempts=row["grading_attempts"],
        )
        if row["grading_attempts"] >= MAX_GRADING_ATTEMPTS:
            mine.update(
                status=Status.ERROR,
                score=0.0,
                checks=[{"name": "grader", "passed": False, "message": CRASHED_TWICE}],
                finished_at=timezone.now(),
            )
            submission_promote_next(user_id=row["user_id"])
        else:
            # Its place in the queue is kept: the learner waited their turn
            # once, and the crash was not theirs.
            mine.update(status=Status.QUEUED, claimed_by="")
        events.submission_changed(row["pk"])
        moved += 1
    if moved:
        log.warning("re-queued or ended %d abandoned grades", moved)
    return moved
