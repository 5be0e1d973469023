"""Celery tasks for the LMS: thin, JSON-only, safe to repeat (lms.grades,
lms.link_scores)."""

from __future__ import annotations

import random

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from lms import grades, link_scores
from lms.courses import RosterError, roster_sync
from lms.models import LmsCourse

# An LMS that stays down: retried with backoff, then left to the sweep.
MAX_RETRIES = 20
EAGER_TRIES = 3


def backoff(retries: int) -> float:
    """5 s, 10 s, 20 s ... up to LMS_RETRY_MAX_SECONDS, with jitter."""
    base = min(settings.LMS_RETRY_MAX_SECONDS, 5 * 2**retries)
    return base * random.uniform(0.8, 1.2)


def _queue() -> str:
    return settings.CELERY_TASK_DEFAULT_QUEUE


@shared_task(
    name="lms.refresh_learner",
    acks_late=True,
    ignore_result=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=10,
)
def refresh_learner(user_id: int) -> int:
    """Recompute one learner's LMS scores (assignments and links); queue a
    send for each that changed."""
    waiting = grades.learner_scores_refresh(user_id)
    for sync_id in waiting:
        send_score.apply_async(args=[sync_id], queue=_queue())
    links = link_scores.link_scores_refresh(user_id)
    for link_id in links:
        send_link_score.apply_async(args=[link_id], queue=_queue())
    return len(waiting) + len(links)


@shared_task(
    name="lms.send_score", bind=True, acks_late=True, ignore_result=True,
    max_retries=MAX_RETRIES,
)  # fmt: skip
def send_score(self, sync_id: int) -> bool:
    return _send(self, grades.score_send, sync_id)


@shared_task(
    name="lms.send_link_score", bind=True, acks_late=True, ignore_result=True,
    max_retries=MAX_RETRIES,
)  # fmt: skip
def send_link_score(self, link_id: int) -> bool:
    return _send(self, link_scores.link_score_send, link_id)


def _send(task, send, row_id: int) -> bool:
    """One send of a row's newest score; an LMS that is down is retried."""
    if task.request.is_eager:
        return _send_in_process(send, row_id)
    try:
        return send(row_id)
    except grades.LmsUnavailable as exc:
        raise task.retry(exc=exc, countdown=backoff(task.request.retries)) from exc


def _send_in_process(send, row_id: int) -> bool:
    """Without a worker (eager mode): a few tries now, never a wait in a
    request; what is still unsent goes with the sweep or the next change."""
    for _ in range(EAGER_TRIES):
        try:
            return send(row_id)
        except grades.LmsUnavailable:
            continue
    return False


@shared_task(name="lms.sweep", acks_late=True, ignore_result=True)
def sweep() -> int:
    """Re-send scores whose messages were lost or whose retries ran out."""
    waiting = grades.scores_waiting()
    for sync_id in waiting:
        send_score.apply_async(args=[sync_id], queue=_queue())
    links = link_scores.link_scores_waiting()
    for link_id in links:
        send_link_score.apply_async(args=[link_id], queue=_queue())
    return len(waiting) + len(links)


@shared_task(name="lms.sync_roster", acks_late=True, ignore_result=True)
def sync_roster(course_id: int) -> None:
    course = LmsCourse.objects.filter(pk=course_id).first()
    if course is not None:
        try:
            roster_sync(course)
        except RosterError:
            pass  # recorded on the course, shown to its instructors
