"""The submission page's event stream: server-sent events, pushed on change.

Two implementations of one contract. Under ASGI (production: uvicorn)
`submission_stream_async` waits on the process's stream hub
(grader.stream_hub): no thread, no Redis connection and no database
connection per open page; it reads its state when the hub says it changed
(a worker's or a cancel's message, or a queue position that moved, refreshed
for all streams at once). Under WSGI (the dev server, the test server)
`submission_stream` holds its request's thread and subscription and re-reads
every REFRESH_SECONDS.

Either way the stream registers before its first read, so no change falls
between the read and the wait; sends the state at once and on every change;
ends at the verdict, or after its lifetime (STREAM_SECONDS under WSGI, where
it holds a thread; settings.STREAM_SECONDS_ASGI on the event loop, where a
reconnect costs more than a wait), when the browser's EventSource reconnects
by itself; and holds no database connection between reads.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator

import redis
from django.conf import settings
from django.db import connection
from rest_framework.utils.encoders import JSONEncoder

from grader import events, stream_hub

STREAM_SECONDS = 30.0  # WSGI: the request's thread is held meanwhile
REFRESH_SECONDS = 2.0
HEARTBEAT_SECONDS = 15.0
RECONNECT_MS = 500


def sse(event: str, data: dict) -> bytes:
    """One server-sent event; the JSON stays on one `data:` line."""
    return f"event: {event}\ndata: {json.dumps(data, cls=JSONEncoder)}\n\n".encode()


VOLATILE = ("server_time", "timings")  # change by themselves, every read


def _news(state: dict, last: dict | None) -> dict | None:
    """The state without its volatile fields, if that differs from `last`."""
    significant = {k: v for k, v in state.items() if k not in VOLATILE}
    return significant if significant != last else None


async def submission_stream_async(
    *, submission_id, user_id: int, read: Callable[[], dict | None]
) -> AsyncIterator[bytes]:
    """Events for one submission, waiting on the process's hub (ASGI)."""
    yield f"retry: {RECONNECT_MS}\n\n".encode()
    lifetime = settings.STREAM_SECONDS_ASGI
    read_async = stream_hub.off_the_loop(read)
    try:
        hub = await stream_hub.hub()
    except (redis.RedisError, OSError):
        hub = None  # no push here: one state, then the page polls
    watch = registered = hub.watch(submission_id, user_id) if hub else None
    deadline = time.monotonic() + lifetime
    last, quiet_since = None, time.monotonic()
    try:
        while True:
            if watch is not None:
                watch.changed.clear()  # before the read: a change during it counts
            state = await read_async()
            if state is None:
                return
            if (news := _news(state, last)) is not None:
                yield sse("status", state)
                last, quiet_since = news, time.monotonic()
            if state.get("terminal") or watch is None:
                return
            watch.queued = state.get("status") == "queued"
            behind_own = state.get("waiting_for") == "your earlier submission"
            watch.place = (
                (state.get("queue_position"), behind_own) if watch.queued else None
            )
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return  # EventSource reconnects after RECONNECT_MS
                quiet = HEARTBEAT_SECONDS - (time.monotonic() - quiet_since)
                try:
                    await asyncio.wait_for(
                        watch.changed.wait(), timeout=max(0.0, min(remaining, quiet))
                    )
                    break
                except TimeoutError:
                    if time.monotonic() - quiet_since >= HEARTBEAT_SECONDS:
                        yield b": still waiting\n\n"
                        quiet_since = time.monotonic()
            if not hub.subscribed.is_set():
                watch = None  # Redis went away: send this state and end
    finally:
        if registered is not None:
            hub.unwatch(registered)


def submission_stream(
    *, submission_id, read: Callable[[], dict | None]
) -> Iterator[bytes]:
    """Events for one submission; `read()` returns its state (None: gone)."""
    yield f"retry: {RECONNECT_MS}\n\n".encode()
    try:
        pubsub = events.subscriber(events.submission_channel(submission_id))
    except (redis.RedisError, OSError):
        pubsub = None  # no push here: the page falls back to polling
    deadline = time.monotonic() + STREAM_SECONDS
    last, quiet_since = None, time.monotonic()
    try:
        while True:
            state = read()
            connection.close()  # idle streams must not hold database connections
            if state is None:
                return
            if (news := _news(state, last)) is not None:
                yield sse("status", state)
                last, quiet_since = news, time.monotonic()
            if state.get("terminal") or pubsub is None:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return  # EventSource reconnects after RECONNECT_MS
            try:
                pubsub.get_message(timeout=min(REFRESH_SECONDS, remaining))
            except (redis.RedisError, OSError):
                return
            if time.monotonic() - quiet_since > HEARTBEAT_SECONDS:
                yield b": still waiting\n\n"
                quiet_since = time.monotonic()
    finally:
        if pubsub is not None:
            pubsub.close()
