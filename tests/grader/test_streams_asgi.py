"""Event streams on the event loop: the deployed stack (gunicorn with a
uvicorn worker on config.asgi), real PostgreSQL and Redis, raw sockets.

The WSGI server this replaces stalled the whole site at 48 open pages
(3 workers x 16 threads); one ASGI process here holds more than that and
still answers /healthz at once, pushes a verdict the moment it is
published, refreshes queue positions without being told, and refuses
streams past its caps with Retry-After instead of stalling.
"""

from __future__ import annotations

import asyncio
import time
from urllib.parse import urlsplit

import pytest
from django.utils import timezone

from benchmarks.sse_client import follow, get, open_stream
from grader import events
from grader.models import Submission
from quiz.core.api.tokens import token_issue

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LEARNERS, PER_LEARNER = 12, 5  # 60 streams: more than the old 48 threads
PROCESS_CAP = LEARNERS * PER_LEARNER + 2


def path(submission) -> str:
    return f"/api/v1/submissions/{submission.pk}/events/"


def test_one_process_holds_the_streams_pushes_and_refuses_past_its_caps(
    db_stack, make_user, block_exercise
):
    url = db_stack.start_web(
        asgi=True,
        workers=1,
        STREAM_MAX_PER_LEARNER=str(PER_LEARNER),
        STREAM_MAX_PER_PROCESS=str(PROCESS_CAP),
    )
    host, port = urlsplit(url).hostname, urlsplit(url).port
    learners = [make_user(f"l{n}") for n in range(LEARNERS + 2)]
    keys = {u.pk: token_issue(user=u)[1] for u in learners}
    queued = {
        u.pk: [
            Submission.objects.create(
                user=u, exercise=block_exercise, code="x", seed=n, status="queued"
            )
            for n in range(PER_LEARNER + 1)
        ]
        for u in learners
    }
    done = Submission.objects.create(
        user=learners[-1], exercise=block_exercise, code="x", seed=9,
        status="passed", score=1.0, finished_at=timezone.now(),
    )  # fmt: skip

    async def scenario():
        async def opened(user, submission):
            stream = await open_stream(host, port, path(submission), keys[user.pk])
            if stream.status == 200:
                asyncio.create_task(follow(stream))
            return stream

        held = await asyncio.gather(
            *[
                opened(u, s)
                for u in learners[:LEARNERS]
                for s in queued[u.pk][:PER_LEARNER]
            ]
        )
        assert {s.status for s in held} == {200}
        first = held[0]
        assert first.headers["content-type"] == "text/event-stream"
        assert first.headers["cache-control"] == "no-cache"
        assert first.headers["x-accel-buffering"] == "no"
        for stream in held:
            await asyncio.wait_for(stream.arrived.wait(), timeout=30)
        assert all(s.events[0][2]["status"] == "queued" for s in held)
        assert [s.events[0][2]["queue_position"] for s in held[:PER_LEARNER]] == [
            1, 2, 3, 4, 5
        ]  # fmt: skip

        # The site answers at once while every stream is open.
        timings = [await get(host, port, "/healthz") for _ in range(3)]
        assert [status for status, _ in timings] == [200, 200, 200]
        assert max(seconds for _, seconds in timings) < 1.0, timings

        # Caps: the learner's sixth stream is 429, the process's cap is 503.
        lea, extra = learners[0], learners[LEARNERS]
        sixth = await opened(lea, queued[lea.pk][PER_LEARNER])
        assert sixth.status == 429 and int(sixth.headers["retry-after"]) > 0
        assert b"polling" in sixth.body
        more = [await opened(extra, s) for s in queued[extra.pk][:3]]
        assert [s.status for s in more] == [200, 200, 503]
        assert int(more[2].headers["retry-after"]) > 0

        for stream in more:
            stream.close()

        # A verdict is pushed the moment it is published.
        target = held[PER_LEARNER + 1]  # the second learner's second submission
        pk = queued[learners[1].pk][1].pk
        await asyncio.to_thread(_finish, pk)
        saved = time.monotonic()
        await asyncio.to_thread(events.submission_changed, pk)
        while not target.ended:
            await asyncio.sleep(0.02)
        arrived, name, data, _ = target.events[-1]
        assert (name, data["status"], data["terminal"]) == ("status", "passed", True)
        assert arrived - saved < 1.0

        # No message for the others: their queue positions move by themselves.
        # The third learner's first finishes unannounced; its later ones move up.
        pk = queued[learners[2].pk][0].pk
        await asyncio.to_thread(_finish, pk)
        second = held[2 * PER_LEARNER + 1]

        async def moved():
            while second.events[-1][2]["queue_position"] != 1:
                await asyncio.sleep(0.05)

        await asyncio.wait_for(moved(), timeout=10)
        for stream in held:
            stream.close()

        # A finished submission: its verdict once, then the end (once the
        # server has noticed the closed streams and freed their places).
        finished = await opened(learners[-1], done)
        for _ in range(50):
            if finished.status != 503:
                break
            await asyncio.sleep(0.2)
            finished = await opened(learners[-1], done)
        await asyncio.wait_for(finished.arrived.wait(), timeout=10)
        while not finished.ended:
            await asyncio.sleep(0.05)
        assert [(e[1], e[2]["terminal"]) for e in finished.events] == [("status", True)]
        # Someone else's stream is a JSON 404; no token is a 401.
        other = await open_stream(host, port, path(done), keys[learners[1].pk])
        assert other.status == 404 and b"No such submission." in other.body
        anonymous = await open_stream(host, port, path(done), "not-a-token")
        assert anonymous.status == 401 and b"detail" in anonymous.body

    asyncio.run(scenario())


def _finish(pk) -> None:
    from django.db import connection

    Submission.objects.filter(pk=pk).update(
        status="passed", score=1.0, finished_at=timezone.now()
    )
    connection.close()
