"""How many event streams one web process sets up at once (ASGI).

Setting a stream up costs what a page costs (authentication, the caps, its
first read, on threads and pooled database connections); holding it after
its first event costs almost nothing. When a web process stops, every page
it held reconnects to the one that takes them: a thousand set-ups at once
kept a lesson page waiting 14-17 s behind them, 41 s at two thousand
(stream_bench.py's web restart). Here at most STREAM_OPENING_MAX streams are
set up at once; the others wait their turn on the event loop, where a
waiting request costs a coroutine, not a thread, and pages pass them by.
One that waits OPENING_WAIT_SECONDS is refused 503 with Retry-After.

Waiting rather than refusing at once: a refused page polls before it tries
again, and a poll costs the server what a set-up does (a first version that
refused took 120 s to seat 1,000 pages, against 17 s without it).

An ASGI wrapper around Django's application (config/asgi.py) rather than a
Django middleware: Django runs a middleware that can run synchronously in
the request's thread when the ones inside it are synchronous, and the wait
would then hold the thread it is there to save. Under WSGI (the dev and test
servers) each request holds a thread of a fixed pool already.
"""

from __future__ import annotations

import asyncio
import json
import re

from django.conf import settings

from grader import metrics

EVENTS = re.compile(r"^/api/v1/submissions/[^/]+/events/$")
OPENING_WAIT_SECONDS = 30.0
BUSY = json.dumps(
    {"detail": "This server is busy setting up live streams; the page tries "
     "again in a moment."}
).encode()  # fmt: skip


class StreamAdmission:
    """A stream holds its place from its turn until its first event is sent
    (its first read done), or until Django is done with it, however it ended."""

    def __init__(self, app):
        self.app = app
        self._places: asyncio.Semaphore | None = None  # made on the server's loop

    def places(self) -> asyncio.Semaphore:
        if self._places is None:
            self._places = asyncio.Semaphore(settings.STREAM_OPENING_MAX)
        return self._places

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not EVENTS.match(scope.get("path", "")):
            return await self.app(scope, receive, send)
        places = self.places()
        try:
            await asyncio.wait_for(places.acquire(), OPENING_WAIT_SECONDS)
        except TimeoutError:
            metrics.stream_refused("opening")
            await send({
                "type": "http.response.start",
                "status": 503,
                "headers": [(b"content-type", b"application/json"),
                            (b"retry-after", b"1")],
            })  # fmt: skip
            await send({"type": "http.response.body", "body": BUSY})
            return None
        held = True

        def give_back() -> None:
            nonlocal held
            if held:
                held = False
                places.release()

        async def sending(message):
            await send(message)
            if b"event: " in message.get("body", b""):
                give_back()

        try:
            return await self.app(scope, receive, sending)
        finally:
            give_back()
