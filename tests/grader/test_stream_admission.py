"""A storm of streams being set up waits its turn on the event loop, past
STREAM_OPENING_MAX at once (grader.stream_admission, around the ASGI
application): pages pass it by, a stream's place comes back at its first
event or whenever Django is done with it, and one that waits too long is
refused 503."""

from __future__ import annotations

import asyncio
import json

from grader import stream_admission
from grader.stream_admission import StreamAdmission

EVENTS = "/api/v1/submissions/5d1b6f52-1e6a-4bb0-9a59-0d6a2d3a8f11/events/"


def scope(path: str) -> dict:
    return {"type": "http", "method": "GET", "path": path, "headers": []}


class FakeDjango:
    """Streams that send `retry:` at once and their first event when told."""

    def __init__(self):
        self.reached: list[str] = []
        self.first_read = asyncio.Event()
        self.done = asyncio.Event()

    async def __call__(self, scope, receive, send):
        self.reached.append(scope["path"])
        if scope["path"] != EVENTS:
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"retry: 500\n\n",
                    "more_body": True})  # fmt: skip
        await self.first_read.wait()
        await send({"type": "http.response.body", "body": b"event: status\n\n",
                    "more_body": True})  # fmt: skip
        await self.done.wait()


async def call(admission, path: str) -> list[dict]:
    sent = []

    async def send(message):
        sent.append(message)

    await admission(scope(path), None, send)
    return sent


def test_past_the_limit_a_stream_waits_its_turn_and_a_page_passes(settings):
    settings.STREAM_OPENING_MAX = 2

    async def scenario():
        django = FakeDjango()
        admission = StreamAdmission(django)
        held = [asyncio.create_task(call(admission, EVENTS)) for _ in range(3)]
        await asyncio.sleep(0.01)
        assert django.reached == [EVENTS, EVENTS]  # the third waits
        await call(admission, "/lessons/x/")
        assert django.reached[-1] == "/lessons/x/"  # a page never waits
        django.first_read.set()  # the two send their first event: set up
        await asyncio.sleep(0.01)
        assert django.reached.count(EVENTS) == 3
        django.done.set()
        await asyncio.gather(*held)

    asyncio.run(scenario())


def test_a_stream_that_waits_too_long_is_refused(settings, monkeypatch):
    settings.STREAM_OPENING_MAX = 1
    monkeypatch.setattr(stream_admission, "OPENING_WAIT_SECONDS", 0.05)

    async def scenario():
        django = FakeDjango()
        admission = StreamAdmission(django)
        first = asyncio.create_task(call(admission, EVENTS))
        await asyncio.sleep(0.01)
        refused = await asyncio.wait_for(call(admission, EVENTS), 1)
        assert refused[0]["status"] == 503
        assert (b"retry-after", b"1") in refused[0]["headers"]
        assert "busy" in json.loads(refused[1]["body"])["detail"]
        assert django.reached == [EVENTS]  # the refused one never reached Django
        django.first_read.set()
        django.done.set()
        await first

    asyncio.run(scenario())


def test_a_stream_that_ends_before_its_first_event_gives_its_place_back(settings):
    """A client gone before the view returned: Django returns without a body."""
    settings.STREAM_OPENING_MAX = 1

    async def gone(scope, receive, send):
        raise OSError("the client left")

    async def scenario():
        admission = StreamAdmission(gone)
        for _ in range(3):  # each would wait forever for a place not given back
            try:
                await asyncio.wait_for(admission(scope(EVENTS), None, None), 1)
            except OSError:
                pass

    asyncio.run(scenario())


def test_the_deployed_application_is_wrapped():
    from config.asgi import application

    assert isinstance(application, StreamAdmission)
