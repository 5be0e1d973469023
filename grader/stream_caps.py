"""Caps on open event streams: per learner (all processes) and per process.

Past a cap the stream is refused at once with Retry-After (429 for the
learner's own cap, 503 for the process's) and the page polls instead: a
refused stream costs one request, a stalled site costs everyone. The
learner's open streams are counted in Redis (a sorted set whose entries
expire with the stream), so the cap holds across web processes and a
process that dies leaks nothing for long.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import redis
from django.conf import settings

from grader import events, metrics

_lock = threading.Lock()
_open = 0


class StreamRefused(Exception):  # noqa: N818 - reads as what happened
    def __init__(self, status: int, cap: str, message: str, retry_after: int):
        super().__init__(message)
        self.status, self.cap, self.retry_after = status, cap, retry_after


def _learner_key(user_id: int) -> str:
    return f"{settings.CELERY_TASK_DEFAULT_QUEUE}:streams:{user_id}"


def stream_take(user_id: int, *, lifetime: float) -> Callable[[], None]:
    """Count one stream for this learner and process; StreamRefused past a cap.

    Returns the release, safe to call more than once.
    """
    global _open
    with _lock:
        if _open >= settings.STREAM_MAX_PER_PROCESS:
            metrics.stream_refused("process")
            raise StreamRefused(
                503,
                "process",
                "This server holds as many live streams as it may; the page "
                "checks for the verdict by polling instead.",
                settings.STREAM_RETRY_AFTER,
            )
        _open += 1
    metrics.stream_opened()
    token = uuid.uuid4().hex
    key = _learner_key(user_id)
    try:
        now = time.time()
        client = events.client()
        pipe = client.pipeline()
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zadd(key, {token: now + lifetime + 10})
        pipe.zcard(key)
        pipe.expire(key, int(lifetime) + 20)
        count = pipe.execute()[2]
        if count > settings.STREAM_MAX_PER_LEARNER:
            client.zrem(key, token)
            _release_process()
            metrics.stream_refused("learner")
            raise StreamRefused(
                429,
                "learner",
                f"You have {settings.STREAM_MAX_PER_LEARNER} live streams open "
                "already (other tabs); this page checks by polling instead.",
                settings.STREAM_RETRY_AFTER,
            )
    except (redis.RedisError, OSError):
        token = None  # no Redis: only the process cap holds
    released = False

    def release() -> None:
        nonlocal released
        if released:
            return
        released = True
        _release_process()
        if token is not None:
            try:
                events.client().zrem(key, token)
            except (redis.RedisError, OSError):
                pass  # the entry expires by itself

    return release


def _release_process() -> None:
    global _open
    with _lock:
        _open -= 1
    metrics.stream_closed()
