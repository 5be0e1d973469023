"""Which submission a free grading slot takes next: fair, lane-aware, FIFO.

The database is the queue. A learner's submissions wait behind their own
(only their oldest queued one, the head of their line, can be claimed, and
only while none of theirs is running); heads are taken in the order they
became ready (`enqueued_at`, reset when the learner's previous grade ends),
so learners take turns; and a worker takes a heavy exercise only while it
has a heavy slot free (grader.lanes). Celery messages only wake a worker
thread: whichever message it got, it claims by this order and keeps
claiming until nothing fits a free slot. Only when no live submission can
be claimed does it take background work (grader.regrade_grading), and never with
the last free slot. A grade that turns slow while the burst is full is set
aside: stopped and queued again behind everyone, to run slow from its
start in a burst slot, so likely loops never hold a base slot (grader.lanes);
so is a slow one whose learner sends another answer (grader.cancellation).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from grading_engine.runner import Slow

from grader import regrade_grading, submission_grading
from grader.budgets import slow_after
from grader.cancellation import running_grades
from grader.lanes import LIGHT, Hold, Lanes, lanes_get
from grader.models import Submission
from grader.process_runner import runner_get

Status = Submission.Status
CANDIDATES = 8  # heads read per claim: losing a race moves on to the next


def claimable(*, lanes: list[str]) -> QuerySet[Submission]:
    """Queued heads of learners with nothing running, in `lanes`, oldest first.

    A learner's line is in the order they sent, except that one set aside
    (a likely loop) goes behind the rest: their next answer, most likely a
    fix, is not kept waiting for the loop's second run.
    """
    same_learner = Submission.objects.filter(user_id=OuterRef("user_id"))
    fresh = same_learner.filter(status=Status.QUEUED, set_aside=False)
    earlier = same_learner.filter(
        status=Status.QUEUED,
        set_aside=OuterRef("set_aside"),
        created_at__lt=OuterRef("created_at"),
    )
    running = same_learner.filter(status=Status.RUNNING)
    return (
        Submission.objects.filter(status=Status.QUEUED, lane__in=lanes)
        .alias(behind_fresh=Exists(fresh))
        .exclude(Exists(earlier))
        .exclude(set_aside=True, behind_fresh=True)
        .exclude(Exists(running))
        .order_by("enqueued_at", "created_at")
    )


def _claim_next(lanes: Lanes) -> tuple[Submission, Hold, bool] | None:
    """Claim the first head that fits; (row, its hold, more waiting)."""
    fresh, aside = lanes.open_lanes(), lanes.open_lanes(set_aside=True)
    if not fresh and not aside:
        return None
    heads = list(
        claimable(lanes=sorted({*fresh, *aside}))
        .filter(Q(set_aside=False, lane__in=fresh) | Q(set_aside=True, lane__in=aside))
        .values_list("pk", "lane", "set_aside")[:CANDIDATES]
    )
    for index, (pk, lane, set_aside) in enumerate(heads):
        hold = lanes.take(lane, set_aside=set_aside)
        if hold is None:
            continue
        try:
            submission = submission_grading.claim(pk)
        except BaseException:
            hold.release()  # a database error must not leak the slot
            raise
        if submission is not None:
            return submission, hold, index + 1 < len(heads)
        hold.release()
    return None


def _regrade_one(lanes: Lanes, wake: Callable[[], None]) -> bool:
    """Grade one pending regrade result if a slot allows; False when none."""
    if not regrade_grading.regrades_pending():
        return False
    hold = lanes.take(LIGHT, background=True)
    if hold is None:
        return False
    try:
        result = regrade_grading.regrade_claim_next()
        if result is None:
            return False
        if lanes.slots > 2:
            wake()  # room for another background thread

        def slow(hold=hold) -> None:
            hold.slow()
            wake()

        exercise = result.regrade.exercise
        regrade_grading.regrade_grade(result, slow=Slow(slow_after(exercise), slow))
        return True
    finally:
        hold.release()


def submission_dispatch(*, wake: Callable[[], None]) -> int:
    """Claim and grade submissions while this process has a slot for one.

    Returns how many it graded. `wake()` sends one more wake-up message when
    more work is waiting, so another thread or worker host joins in.
    """
    if settings.GRADER_RUNNER == "pool":
        # A worker still warming up claims nothing: the rows stay for the
        # warm workers instead of waiting here, claimed, for this one.
        runner_get()
    lanes = lanes_get()
    graded = 0
    while True:
        claimed = submission_grading.with_db_retry(lambda: _claim_next(lanes))
        if claimed is None:
            # Nothing live waits: background work may use a slot (not the last).
            if not submission_grading.with_db_retry(lambda: _regrade_one(lanes, wake)):
                return graded
            graded += 1
            continue
        submission, hold, more = claimed
        if more:
            wake()
        set_aside = threading.Event()

        def slow(hold=hold, row=submission, set_aside=set_aside) -> None:
            if hold.slow():  # the burst is full: stop it, to run again later
                set_aside.set()
                running_grades.cancel(row.pk)
            elif lanes.burst:  # as soon as its learner sends another answer
                running_grades.yield_to_own(
                    row.pk, user_id=row.user_id, set_aside=set_aside
                )
            wake()  # a burst slot may take the next grade now

        # One set aside before runs at the lowest priority from its start.
        after = 0.0 if submission.set_aside else slow_after(submission.exercise)
        try:
            submission_grading.grade_claimed(
                submission, slow=Slow(after, slow), set_aside=set_aside
            )
        except Exception:
            # Never leave it "running" under this live worker: the learner's
            # queue would wait behind it until its lease ran out.
            submission_grading.with_db_retry(
                lambda row=submission: submission_grading.submission_release(row)
            )
            raise
        finally:
            hold.release()
        graded += 1


def submissions_sweep(*, wake: Callable[[], None]) -> int:
    """Re-queue abandoned grades and wake a worker for queued rows left waiting.

    Covers lost messages (a Redis restart keeps nothing here) and workers that
    died mid-grade. Waking twice is harmless: the claim lets one through.
    """
    moved = (
        submission_grading.submissions_requeue_abandoned()
        + regrade_grading.regrades_requeue_abandoned()
    )
    stale = timezone.now() - timedelta(seconds=settings.SWEEP_QUEUED_AFTER_SECONDS)
    waiting = Submission.objects.filter(
        status=Status.QUEUED, enqueued_at__lt=stale
    ).count()
    if moved or waiting or regrade_grading.regrades_pending():
        wake()
    return moved + waiting
