"""Caps on open event streams: per learner (all processes) and per process.

Past a cap the stream is refused at once with Retry-After (429 for the
learner's own cap, 503 for the process's) and the page polls instead: a
refused stream costs one request, a stalled site costs everyone. The
learner's open streams are counted in Redis (a sorted set whose entries
expire with the stream), so the cap holds across web processes. Each entry
names its web process, which holds a lease in Redis renewed by a thread
(STREAM_LEASE_SECONDS): the entries of a process that died without closing
its streams (kill -9, out of memory) stop counting when its lease lapses,
not at the end of their lifetime, and its learners' pages stream again.

A stream counts only while it is served: `served()` takes its slot when the
server starts reading the stream's body and gives it back in the body's
`finally`, which runs however the body ends (its end, the client leaving,
an error, a cancelled task). The view only checks the caps (`stream_check`),
to answer 429 or 503 before any header: a view whose client leaves before
it returns (Django then drops its response unread and never closes it)
holds nothing. The few streams that pass the check while the last slots go
get a `refused` event instead, and the page polls.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import redis
from django.conf import settings

from grader import events, metrics
from grader.live import sse

_lock = threading.Lock()
_open = 0


class StreamRefused(Exception):  # noqa: N818 - reads as what happened
    def __init__(self, status: int, cap: str, message: str, retry_after: int):
        super().__init__(message)
        self.status, self.cap, self.retry_after = status, cap, retry_after


def _learner_key(user_id: int) -> str:
    return f"{settings.CELERY_TASK_DEFAULT_QUEUE}:streams:{user_id}"


def _lease_key(process: str) -> str:
    return f"{settings.CELERY_TASK_DEFAULT_QUEUE}:streams:process:{process}"


_lease = {"pid": 0, "name": "", "keys": set()}


def _lease_name() -> str:
    """This process's name in its learners' entries, with its lease's renewal
    running (a forked process gets a name and a thread of its own)."""
    with _lock:
        if _lease["pid"] != os.getpid():
            _lease.update(pid=os.getpid(), name=uuid.uuid4().hex[:16], keys=set())
            threading.Thread(
                target=_renew, args=(os.getpid(),), name="stream-lease", daemon=True
            ).start()
        _lease["keys"].add(_lease_key(_lease["name"]))
        return _lease["name"]


def _renew(pid: int) -> None:
    """Renew this process's leases every third of their time, while it lives."""
    while _lease["pid"] == pid:
        seconds = settings.STREAM_LEASE_SECONDS
        with _lock:
            keys = list(_lease["keys"])
        try:
            pipe = events.client().pipeline(transaction=False)
            for key in keys:
                pipe.set(key, "1", ex=seconds)
            pipe.execute()
        except (redis.RedisError, OSError):
            pass  # Redis away: its entries went with it, or lapse with the lease
        time.sleep(seconds / 3)


def _alive(client: redis.Redis, key: str, members: list[bytes]) -> int:
    """How many of a learner's `members` belong to a live process; the others
    (their process's lease lapsed) are removed."""
    owner = {m: m.split(b":", 1)[0] for m in members if b":" in m}
    names = sorted(set(owner.values()))
    leased = client.mget([_lease_key(n.decode()) for n in names]) if names else []
    dead = {n for n, lease in zip(names, leased, strict=True) if lease is None}
    gone = [m for m, name in owner.items() if name in dead]
    if gone:
        client.zrem(key, *gone)
    return len(members) - len(gone)


def _process_refusal() -> StreamRefused:
    metrics.stream_refused("process")
    return StreamRefused(
        503,
        "process",
        "This server holds as many live streams as it may; the page "
        "checks for the verdict by polling instead.",
        settings.STREAM_RETRY_AFTER,
    )


def _learner_refusal() -> StreamRefused:
    metrics.stream_refused("learner")
    return StreamRefused(
        429,
        "learner",
        f"You have {settings.STREAM_MAX_PER_LEARNER} live streams open "
        "already (other tabs); this page checks by polling instead.",
        settings.STREAM_RETRY_AFTER,
    )


def stream_check(user_id: int) -> None:
    """StreamRefused if a new stream would pass a cap now; counts nothing."""
    with _lock:
        full = _open >= settings.STREAM_MAX_PER_PROCESS
    if full:
        raise _process_refusal()
    key = _learner_key(user_id)
    try:
        client = events.client()
        live = _alive(client, key, client.zrangebyscore(key, time.time(), "+inf"))
    except (redis.RedisError, OSError):
        return  # no Redis: only the process cap holds
    if live >= settings.STREAM_MAX_PER_LEARNER:
        raise _learner_refusal()


def stream_take(user_id: int, *, lifetime: float) -> Callable[[], None]:
    """Count one stream for this learner and process; StreamRefused past a cap.

    Returns the release, safe to call more than once.
    """
    global _open
    with _lock:
        if _open >= settings.STREAM_MAX_PER_PROCESS:
            raise _process_refusal()
        _open += 1
    metrics.stream_opened()
    process = _lease_name()
    token = f"{process}:{uuid.uuid4().hex}"
    key = _learner_key(user_id)
    try:
        now = time.time()
        client = events.client()
        pipe = client.pipeline()  # one transaction: of two racing, one sees both
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.set(_lease_key(process), "1", ex=settings.STREAM_LEASE_SECONDS)
        pipe.zadd(key, {token: now + lifetime + 10})
        pipe.zrangebyscore(key, now, "+inf")
        pipe.expire(key, int(lifetime) + 20)
        count = _alive(client, key, pipe.execute()[3])
        if count > settings.STREAM_MAX_PER_LEARNER:
            client.zrem(key, token)
            _release_process()
            raise _learner_refusal()
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


def _refused_event(exc: StreamRefused) -> bytes:
    return f"retry: {exc.retry_after * 1000}\n\n".encode() + sse(
        "refused", {"detail": str(exc), "cap": exc.cap, "retry_after": exc.retry_after}
    )


def served(body: Iterator[bytes], *, user_id: int, lifetime: float) -> Iterator[bytes]:
    """`body`, holding a stream slot while it is read (WSGI)."""
    try:
        release = stream_take(user_id, lifetime=lifetime)
    except StreamRefused as exc:
        body.close()
        yield _refused_event(exc)
        return
    try:
        yield from body
    finally:
        release()
        body.close()


async def served_async(
    body: AsyncIterator[bytes], *, user_id: int, lifetime: float
) -> AsyncIterator[bytes]:
    """`body`, holding a stream slot while it is read (ASGI).

    Nothing awaits between the take and the `try`, so no cancellation falls
    between them: the slot is given back whatever ends the body.
    """
    try:
        release = stream_take(user_id, lifetime=lifetime)
    except StreamRefused as exc:
        await body.aclose()
        yield _refused_event(exc)
        return
    try:
        async for chunk in body:
            yield chunk
    finally:
        release()
        await body.aclose()
