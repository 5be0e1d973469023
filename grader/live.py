"""The submission page's event stream: server-sent events, pushed on change.

The stream subscribes to the submission's channel (grader.events) before
its first read, so no change falls between the read and the wait, and sends
the submission's state whenever a worker or a cancel changes the row, plus
every few seconds (the queue position moves when the learner's earlier
submissions finish). It ends at the verdict, or after STREAM_SECONDS, when
the browser's EventSource reconnects by itself: no request holds a server
thread for long. Between reads it holds no database connection.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import redis
from django.db import connection
from rest_framework.utils.encoders import JSONEncoder

from grader import events

STREAM_SECONDS = 30.0
REFRESH_SECONDS = 2.0
HEARTBEAT_SECONDS = 15.0
RECONNECT_MS = 500


def sse(event: str, data: dict) -> bytes:
    """One server-sent event; the JSON stays on one `data:` line."""
    return f"event: {event}\ndata: {json.dumps(data, cls=JSONEncoder)}\n\n".encode()


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
    volatile = ("server_time", "timings")  # change by themselves, every read
    try:
        while True:
            state = read()
            connection.close()  # idle streams must not hold database connections
            if state is None:
                return
            significant = {k: v for k, v in state.items() if k not in volatile}
            if significant != last:
                yield sse("status", state)
                last, quiet_since = significant, time.monotonic()
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
