"""Celery tasks: thin, JSON-only wrappers that take ids and call one service."""

from __future__ import annotations

import logging
import os

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import RedisError

from grader import dispatch

log = logging.getLogger(__name__)


@shared_task(name="grader.ping", acks_late=True, soft_time_limit=10, time_limit=15)
def ping(payload: dict) -> dict:
    """Echo `payload` with the worker's pid: proves a round trip through the broker."""
    return {"echo": payload, "worker_pid": os.getpid()}


@shared_task(
    name="grader.grade_submission",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=10,
    ignore_result=True,
)
def grade_submission(submission_id: str | None = None) -> int:
    """Wake a worker thread: it grades what is next in line, not only this id.

    The id says which submission caused the wake-up (for the logs); the
    order is the queue's (grader.dispatch). Repeating it is harmless.
    """
    return dispatch.submission_dispatch(wake=wake)


@shared_task(name="grader.sweep", acks_late=True, ignore_result=True)
def sweep() -> int:
    """Re-queue grades whose worker died; wake workers for forgotten rows."""
    return dispatch.submissions_sweep(wake=wake)


def wake(submission_id: str | None = None) -> None:
    """Send one wake-up to the grading workers.

    Not in eager mode: there the grading loop runs in the caller and goes on
    by itself; a wake-up would only nest a second loop inside it.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    grade_submission.apply_async(
        args=[submission_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
    )


def wake_on_commit(submission_id: str | None = None) -> None:
    """Send one wake-up once the current transaction commits.

    A broker that is away (Redis restarting) costs the wake-up, never the
    request: the row is saved, and the sweeper wakes a worker for it.
    """

    def send() -> None:
        try:  # in eager mode too: this call runs the grading loop there
            grade_submission.apply_async(
                args=[submission_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
            )
        except (BrokerError, RedisError) as exc:
            log.warning("wake-up not sent (the sweeper will): %s", exc)

    transaction.on_commit(send)


@shared_task(name="grader.verify_exercise_version", acks_late=True, ignore_result=True)
def verify_exercise_version(version_id: int) -> str | None:
    """Grade an admin's saved exercise version; promote it if it passes."""
    from grader.process_runner import runner_get
    from grader.versions import exercise_version_verify

    # A worker grades with its warm pool; in eager mode this is the web
    # process, which must not hold one (like manage.py grade, it runs cold).
    # (runner None grades cold and reports a missing sandbox as the failure).
    runner = None if settings.CELERY_TASK_ALWAYS_EAGER else runner_get()
    return exercise_version_verify(version_id=version_id, runner=runner)


def verify_version_send(version_id: int) -> None:
    """Queue a version's verification (called after the save commits)."""
    verify_exercise_version.apply_async(
        args=[version_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
    )


@shared_task(name="grader.build_local_check", acks_late=True, ignore_result=True)
def build_local_check(exercise_id: int) -> bool:
    """Build an authored exercise's local-check bundle (grader.local_checks)."""
    from grader.local_checks import local_check_build
    from grader.process_runner import runner_get

    runner = runner_get("cold") if settings.CELERY_TASK_ALWAYS_EAGER else None
    return local_check_build(exercise_id=exercise_id, runner=runner)
