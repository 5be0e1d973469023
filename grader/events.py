"""Live submission events over Redis pub/sub: the worker speaks, pages listen.

A worker publishes when a submission starts, finishes or is cancelled; the
submission page's event stream (grader.live) is subscribed to that one
submission and pushes the new state at once, instead of the page polling.
Cancels travel the same way, to whichever worker host runs the grade.
Channels carry the deployment's queue name, as the queue does, so test runs
and benchmarks never hear each other.

Publishing is best effort and never fails a grade: without Redis a page
falls back to polling and a worker to its database check (grader.cancellation).
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.conf import settings

log = logging.getLogger(__name__)
_lock = threading.Lock()
_clients: dict[str, redis.Redis] = {}


def client() -> redis.Redis:
    """This process's client: a few connections, however many threads ask."""
    url = settings.REDIS_URL
    with _lock:
        if url not in _clients:
            pool = redis.BlockingConnectionPool.from_url(
                url, max_connections=4, timeout=5, socket_connect_timeout=1,
                socket_timeout=2,
            )  # fmt: skip
            _clients[url] = redis.Redis(connection_pool=pool)
        return _clients[url]


def submission_channel(submission_id) -> str:
    return f"{settings.CELERY_TASK_DEFAULT_QUEUE}:submission:{submission_id}"


def cancel_channel() -> str:
    return f"{settings.CELERY_TASK_DEFAULT_QUEUE}:cancel"


def _publish(channel: str, message: str) -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return  # no Redis in this deployment: pages poll
    try:
        client().publish(channel, message)
    except redis.RedisError as exc:
        log.warning("could not publish to %s: %s", channel, exc)


def submission_changed(submission_id) -> None:
    """Tell the pages watching this submission that its row changed."""
    _publish(submission_channel(submission_id), str(submission_id))


def cancel_requested(submission_id) -> None:
    """Tell every worker that this submission's grade must stop."""
    _publish(cancel_channel(), str(submission_id))


def subscriber(*channels: str, timeout: float = 2.0) -> redis.client.PubSub:
    """A subscription of its own (one connection per listener), confirmed.

    It returns once Redis has confirmed every channel, so nothing published
    after this call is missed; its get_message() then returns only messages
    (None when none came in time).
    """
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1)
    pubsub = client.pubsub()
    # The client owns the connection pool and closes it when collected,
    # the subscription's connection included: keep it alive with the pubsub.
    pubsub.owner = client
    pubsub.subscribe(*channels)
    deadline = time.monotonic() + timeout
    confirmed = 0
    while confirmed < len(set(channels)):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pubsub.close()
            raise redis.TimeoutError("Redis did not confirm the subscription")
        message = pubsub.get_message(timeout=remaining)
        if message and message["type"] == "subscribe":
            confirmed += 1
    pubsub.ignore_subscribe_messages = True
    return pubsub
