"""Celery tasks: thin, JSON-only wrappers that take ids and call one service."""

from __future__ import annotations

import os

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from grader import submission_grading


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
def grade_submission(submission_id: str) -> str | None:
    """Grade the submission with this id; repeating it is harmless."""
    return submission_grading.submission_grade(submission_id=submission_id)


@shared_task(name="grader.sweep", acks_late=True, ignore_result=True)
def sweep() -> int:
    """Re-send submissions whose message was lost or whose worker died."""
    return submission_grading.submissions_sweep(resend=_grade_submission_send)


def _grade_submission_send(submission_id: str) -> None:
    grade_submission.apply_async(
        args=[submission_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
    )
