"""Grading an exercise's submissions again after its harness, options or
reference changed; the worker's half of it.

A regrade is a list of RegradeResult rows, one per submission, each holding
the submission's old verdict. Worker threads take them only when no live
submission is waiting and never with the last free slot (grader.dispatch),
so a regrade of thousands never holds up a learner. Each is graded with the
submission's own code and seed against the exercise as it is now; the new
verdict replaces the submission's (so gradebooks follow at once) and both
stay on the result. A grade the grader itself failed changes nothing.
"""

from __future__ import annotations

import logging
import math
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from grading_engine.grading import Verdict
from grading_engine.runner import Slow

from grader import submission_grading
from grader.models import Exercise, Regrade, RegradeResult, Submission
from grader.process_runner import exercise_grade
from quiz.core.db_text import db_text_clean
from quiz.core.score_events import scores_changed

log = logging.getLogger(__name__)
GRADED = (Submission.Status.PASSED, Submission.Status.FAILED, Submission.Status.ERROR)
Result = RegradeResult.Status
BATCH = 500


@transaction.atomic
def regrade_prepare(
    *,
    exercise: Exercise,
    requested_by,
    scope: str,
    user_ids: list[int] | None = None,
    cohort_id: int | None = None,
) -> Regrade:
    """The regrade and one pending result per graded submission in scope."""
    regrade = Regrade.objects.create(
        exercise=exercise,
        requested_by=requested_by,
        scope=scope,
        user_ids=user_ids,
        cohort_id=cohort_id,
    )
    submissions = Submission.objects.filter(exercise=exercise, status__in=GRADED)
    if user_ids is not None:
        submissions = submissions.filter(user_id__in=user_ids)
    rows = [
        RegradeResult(
            regrade=regrade,
            submission_id=pk,
            old_status=status,
            old_score=score,
            old_checks=checks,
        )
        for pk, status, score, checks in submissions.order_by("created_at").values_list(
            "pk", "status", "score", "checks"
        )
    ]
    RegradeResult.objects.bulk_create(rows, batch_size=BATCH)
    regrade.total = len(rows)
    if not rows:
        regrade.status = Regrade.Status.DONE
        regrade.finished_at = timezone.now()
    regrade.save(update_fields=["total", "status", "finished_at"])
    return regrade


def regrade_claim_next() -> RegradeResult | None:
    """Move the oldest pending result to running for this worker.

    One transaction per claim: a database that goes away between the update
    and the read leaves the result pending for the retry, not running under
    a worker that never got it.
    """
    pending = (
        RegradeResult.objects.filter(status=Result.PENDING)
        .order_by("regrade__created_at", "pk")
        .values_list("pk", flat=True)[:8]
    )
    for pk in pending:
        with transaction.atomic():
            claimed = RegradeResult.objects.filter(pk=pk, status=Result.PENDING).update(
                status=Result.RUNNING,
                claimed_by=submission_grading.worker_id(),
                started_at=timezone.now(),
            )
            if not claimed:
                continue
            row = RegradeResult.objects.select_related(
                "regrade__exercise", "submission"
            ).get(pk=pk)
            Regrade.objects.filter(
                pk=row.regrade_id, status=Regrade.Status.QUEUED
            ).update(status=Regrade.Status.RUNNING)
            return row
    return None


def _graders_fault(verdict: Verdict) -> bool:
    """An error verdict that says the grader, not the code, failed."""
    if verdict.status != "error":
        return False
    return any(
        check.name == "grader" or "sandbox worker died" in check.message
        for check in verdict.checks
    )


def regrade_grade(result: RegradeResult, *, slow: Slow | None = None) -> bool:
    """Grade one claimed result and apply it; True when the verdict changed."""
    exercise = Exercise.objects.get(pk=result.regrade.exercise_id)  # as it is now
    submission = result.submission
    try:
        verdict = exercise_grade(
            exercise=exercise,
            code=submission.code,
            seed=submission.seed,
            budget=submission_grading.exercise_budget_measured(exercise),
            slow=slow,
        )
    except Exception:  # noqa: BLE001 - recorded on the result, the row keeps its own
        log.exception("regrading submission %s failed in the grader", submission.pk)
        verdict = None
    if verdict is None or _graders_fault(verdict):
        _finish(result, Result.ERROR, changed=False)
        return False
    clean = db_text_clean(verdict.to_dict())
    changed = verdict.status != result.old_status or not math.isclose(
        verdict.score, result.old_score or 0.0, abs_tol=1e-9
    )
    limit = settings.SUBMISSION_OUTPUT_MAX_CHARS
    with transaction.atomic():
        Submission.objects.filter(pk=submission.pk).update(
            status=verdict.status,
            score=verdict.score,
            checks=clean["checks"],
            stdout=clean["stdout"][:limit],
            stderr=clean["stderr"][:limit],
            grade_ms=verdict.duration_ms,
            exercise_version=exercise.version,
        )
        _finish(
            result,
            Result.DONE,
            changed=changed,
            new_status=verdict.status,
            new_score=verdict.score,
            new_checks=clean["checks"],
        )
        if changed:
            scores_changed([submission.user_id])
    return changed


def _finish(result: RegradeResult, status: str, *, changed: bool, **new) -> None:
    with transaction.atomic():
        updated = RegradeResult.objects.filter(
            pk=result.pk, status=Result.RUNNING
        ).update(status=status, changed=changed, finished_at=timezone.now(), **new)
        if not updated:
            return  # re-queued by the sweeper meanwhile: the next claim counts
        Regrade.objects.filter(pk=result.regrade_id).update(
            done=F("done") + 1,
            changed=F("changed") + int(changed),
            errors=F("errors") + int(status == Result.ERROR),
        )
        Regrade.objects.filter(
            pk=result.regrade_id, done__gte=F("total"), finished_at__isnull=True
        ).update(status=Regrade.Status.DONE, finished_at=timezone.now())


def regrades_requeue_abandoned() -> int:
    """Running results whose worker died (lease expired, or dead on this host)."""
    lease = timezone.now() - timedelta(seconds=settings.GRADING_LEASE_SECONDS)
    running = RegradeResult.objects.filter(status=Result.RUNNING)
    stale = [
        pk
        for pk, claimed_by, started in running.values_list(
            "pk", "claimed_by", "started_at"
        )
        if started is None
        or started < lease
        or submission_grading.owner_is_dead(claimed_by)
    ]
    return RegradeResult.objects.filter(pk__in=stale, status=Result.RUNNING).update(
        status=Result.PENDING, claimed_by=""
    )


def regrades_pending() -> bool:
    return RegradeResult.objects.filter(status=Result.PENDING).exists()


def changed_for_learner(*, user, days: int = 30) -> list[RegradeResult]:
    """A learner's submissions whose verdict a regrade changed lately."""
    since = timezone.now() - timedelta(days=days)
    return list(
        RegradeResult.objects.filter(
            Q(submission__user=user),
            changed=True,
            status=Result.DONE,
            finished_at__gte=since,
        )
        .select_related("submission__exercise")
        .order_by("-finished_at")[:10]
    )
