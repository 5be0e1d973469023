"""How often and how much a learner may submit, shared by every client.

The API, the HTML form and any future client all go through
services.submission_create, which calls these; so one learner has one budget
whichever way they submit.

- The rate (SUBMISSION_RATE, e.g. "30/min") is counted in the Django cache
  (Redis when deployed) with `cache.add` + `cache.incr`, which are atomic
  across processes: no read-modify-write race between web workers. A window
  opens at a learner's first submission and lasts one period; so at most
  `limit` submissions are accepted in any one window (2 x limit across the
  boundary of two windows, never more).
- The outstanding cap (SUBMISSION_MAX_OUTSTANDING) counts the learner's
  queued and running rows in the database, under a lock on the learner's user
  row, so two simultaneous requests cannot both slip under it.
"""

from __future__ import annotations

import logging
import math
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from redis.exceptions import RedisError

from quiz.core.rates import rate_parse, rate_words

log = logging.getLogger(__name__)
# When the cap refuses, suggest retrying after about one light grade.
CAP_RETRY_AFTER_SECONDS = 5


class SubmissionThrottled(Exception):  # noqa: N818 - reads as what happened
    """Too many submissions; `retry_after` seconds until one may be accepted."""

    def __init__(self, message: str, *, retry_after: int):
        super().__init__(message)
        self.retry_after = max(1, int(retry_after))


def rate_take(*, user_id: int, rate: str | None = None) -> None:
    """Count one submission against the learner's rate; raise when over it.

    With the cache away (Redis restarting) nothing is counted and the
    submission goes on: the outstanding cap, kept in the database, still
    bounds every learner, and a deadline is no time to refuse them.
    """
    try:
        _rate_take(user_id=user_id, rate=rate)
    except RedisError as exc:
        log.warning("submission rate not counted (the cache is away): %s", exc)


def _rate_take(*, user_id: int, rate: str | None) -> None:
    limit, period = rate_parse(rate or settings.SUBMISSION_RATE)
    now = time.time()
    start_key = f"submissions:rate:{user_id}:{period}:start"
    for _ in range(3):  # the window may expire between two calls; start again
        cache.add(start_key, now, timeout=period)
        start = cache.get(start_key)
        if start is None:
            continue
        count_key = f"submissions:rate:{user_id}:{period}:{start!r}"
        cache.add(count_key, 0, timeout=period + 1)
        try:
            count = cache.incr(count_key)
        except ValueError:  # the counter expired a moment ago
            continue
        break
    else:  # pragma: no cover - the cache keeps dropping keys; fail closed
        raise SubmissionThrottled(
            "the submission counter is unavailable; try again in a moment",
            retry_after=1,
        )
    if count > limit:
        raise SubmissionThrottled(
            f"too many submissions: the limit is {rate_words(limit, period)}",
            retry_after=math.ceil(start + period - now),
        )


def outstanding_check(*, user, outstanding_qs) -> None:
    """Refuse when the learner already has the maximum queued or running.

    Call inside the transaction that creates the row: it locks the user row so
    concurrent submissions of one learner are counted one after the other.
    """
    cap = settings.SUBMISSION_MAX_OUTSTANDING
    user_model = get_user_model()
    list(user_model.objects.select_for_update().filter(pk=user.pk).values("pk"))
    waiting = outstanding_qs.count()
    if waiting >= cap:
        raise SubmissionThrottled(
            f"you already have {waiting} submission{'s' * (waiting != 1)} waiting "
            f"to be graded (at most {cap} at a time); submit again once one "
            "has finished",
            retry_after=CAP_RETRY_AFTER_SECONDS,
        )
