"""A stream's slot comes back however its client leaves, on the server as
deployed (gunicorn with a uvicorn worker on config.asgi), with raw sockets.

The attack this holds against: a client that sends the request and closes
before the view returns. Django cancels the request and drops the view's
response unread, never closing it, so a slot taken in the view was never
given back; a few dozen such requests filled a process's cap and it
answered every learner 503 until restart. Slots are now taken when the
body is first read and given back in its `finally`.
"""

from __future__ import annotations

import asyncio
import re
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.db import connection

from benchmarks.sse_client import follow, get, open_stream
from grader.models import Submission
from quiz.core.api.tokens import token_issue
from tests.pipeline.conftest import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CAP = 4  # the process's cap: a handful of leaks would lock everyone out


def streams_open(url: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        text = response.read().decode()
    found = re.search(r"^course_streams_open (\S+)$", text, re.MULTILINE)
    assert found, "no course_streams_open in /metrics"
    return float(found.group(1))


def request(path: str, host: str, port: int, key: str) -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Authorization: Token {key}\r\nAccept: text/event-stream\r\n\r\n"
    ).encode()


def test_a_stream_slot_comes_back_however_the_client_leaves(
    db_stack, make_user, block_exercise
):
    url = db_stack.start_web(
        asgi=True,
        workers=1,
        STREAM_MAX_PER_PROCESS=str(CAP),
        STREAM_MAX_PER_LEARNER="100",
    )
    host, port = urlsplit(url).hostname, urlsplit(url).port
    learner = make_user("leaver")
    key = token_issue(user=learner)[1]
    queued = Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", seed=1, status="queued"
    )
    path = f"/api/v1/submissions/{queued.pk}/events/"

    def back(what: str):
        """Until every slot has come back (read from the server's /metrics).

        A slot comes back once the server's loop has seen the client go
        (well within a second on an idle host): 90 s is room for a loaded
        one (30 s was once outrun in CI beside a Chromium test)."""
        return asyncio.to_thread(
            wait_for, lambda: streams_open(url) == 0, timeout=90, what=what
        )

    db = connection.settings_dict
    dsn = {
        "dbname": db["NAME"],
        "user": db["USER"],
        "host": db["HOST"],
        "port": db["PORT"] or 5432,
    }

    async def connect():
        return await asyncio.open_connection(host, port)

    async def before_the_view_returns() -> None:
        """The view is held at its query (the table locked) while the client
        leaves; the view then finishes for nobody."""
        with psycopg.connect(**dsn, autocommit=True) as lock:
            lock.execute("BEGIN")
            lock.execute("LOCK TABLE grader_submission IN ACCESS EXCLUSIVE MODE")
            reader, writer = await connect()
            writer.write(request(path, host, port, key))
            await writer.drain()

            def others(where: str) -> int:
                """The server's backends on this database that match `where`."""
                return lock.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                    f" current_database() AND pid <> pg_backend_pid() AND {where}"
                ).fetchone()[0]

            def waiting() -> bool:
                return others("wait_event_type = 'Lock'") > 0

            await asyncio.to_thread(
                wait_for, waiting, timeout=30, what="the view to wait on the lock"
            )
            writer.close()
            # A whole request served after the close: the server's loop has
            # seen the disconnect (and cancelled the request) by then.
            assert (await get(host, port, "/healthz"))[0] == 200
            lock.execute("COMMIT")

            def finished() -> bool:
                return others("(state = 'active' OR wait_event_type = 'Lock')") == 0

            await asyncio.to_thread(
                wait_for, finished, timeout=30, what="the view's query"
            )

    async def after_the_headers() -> None:
        stream = await open_stream(host, port, path, key)
        assert stream.status == 200
        stream.close()

    async def mid_stream() -> None:
        stream = await open_stream(host, port, path, key)
        task = asyncio.create_task(follow(stream))
        await asyncio.wait_for(stream.arrived.wait(), timeout=30)
        assert stream.events[0][2]["status"] == "queued"
        stream.close()
        await task

    async def within_ms(delay_ms: int) -> None:
        reader, writer = await connect()
        writer.write(request(path, host, port, key))
        await writer.drain()
        await asyncio.sleep(delay_ms / 1000)  # the attack's own timing
        writer.close()

    async def scenario():
        await before_the_view_returns()
        await back("the slot of a client gone before the view returned")
        for leave in (after_the_headers, mid_stream):
            await asyncio.gather(*[leave() for _ in range(CAP)])
            await back(f"the slots of clients gone {leave.__name__}")
        for _ in range(4):  # the attack as found: 1 to 8 ms, 32 times
            await asyncio.gather(*[within_ms(ms) for ms in range(1, 9)])
        await back("the slots of clients gone within 1 to 8 ms")

        # The process still serves its whole cap, and refuses past it.
        held = [await open_stream(host, port, path, key) for _ in range(CAP)]
        assert [s.status for s in held] == [200] * CAP
        followed = [asyncio.create_task(follow(s)) for s in held]
        for stream in held:
            await asyncio.wait_for(stream.arrived.wait(), timeout=30)
        assert await asyncio.to_thread(streams_open, url) == CAP
        refused = await open_stream(host, port, path, key)
        assert refused.status == 503 and int(refused.headers["retry-after"]) > 0
        for stream in held:
            stream.close()
        await asyncio.gather(*followed)
        await back("the slots of streams closed by their clients")

    try:
        asyncio.run(scenario())
    except AssertionError:
        # It failed once in CI, cause not found (docs/testing.md, session
        # 15): the server's own account goes with the failure.
        print(Path(db_stack.workers[-1].log_path).read_text()[-6000:])
        raise


def test_a_stopped_web_process_gives_its_streams_slots_back(
    db_stack, make_user, block_exercise
):
    """SIGTERM (a deploy, a restart) with streams open: the process cuts them
    and their `finally` gives the learner's slots back before it exits. It
    used to be killed at gunicorn's graceful timeout with its slots still
    counted in Redis for their lifetime (5 minutes), and every page that
    reconnected was refused 429 (config/web_worker.py)."""
    import redis
    from django.conf import settings

    per_learner = 2
    env = {"STREAM_MAX_PER_LEARNER": str(per_learner)}
    url = db_stack.start_web(asgi=True, workers=1, **env)
    web = db_stack.workers[-1]
    host, port = urlsplit(url).hostname, urlsplit(url).port
    learner = make_user("restarted")
    key = token_issue(user=learner)[1]
    paths = [
        f"/api/v1/submissions/{s.pk}/events/"
        for s in Submission.objects.bulk_create(
            Submission(user=learner, exercise=block_exercise, code="x", seed=n,
                       status="queued", lane="held")  # a lane no worker takes
            for n in range(per_learner)
        )
    ]  # fmt: skip
    counted = redis.Redis.from_url(settings.REDIS_URL)
    slots = f"{db_stack.queue}:streams:{learner.pk}"

    async def open_all(where_port: int) -> tuple[list, list]:
        streams = [await open_stream(host, where_port, path, key) for path in paths]
        following = [asyncio.create_task(follow(stream)) for stream in streams]
        for stream in streams:
            await asyncio.wait_for(stream.arrived.wait(), 30)
        return streams, following

    async def scenario() -> None:
        streams, following = await open_all(port)
        assert [s.status for s in streams] == [200] * per_learner
        assert counted.zcard(slots) == per_learner
        # SIGTERM, then SIGKILL after 20 s
        await asyncio.to_thread(db_stack.stop_workers, [web])
        await asyncio.wait_for(asyncio.gather(*following), 10)  # cut
        assert counted.zcard(slots) == 0
        # A new process takes the learner's pages back at once.
        again = urlsplit(db_stack.start_web(asgi=True, workers=1, **env)).port
        streams, _ = await open_all(again)
        assert [s.status for s in streams] == [200] * per_learner
        for stream in streams:
            stream.close()

    asyncio.run(scenario())
    log = Path(web.log_path).read_text()
    assert "SIGKILL" not in log, log[-2000:]


def test_a_killed_web_process_holds_its_learners_slots_only_until_its_lease_lapses(
    db_stack, make_user, block_exercise
):
    """kill -9 (or the out-of-memory killer) with a stream open: no `finally`
    runs and the learner's entry stays in Redis. It used to count for the
    stream's lifetime (5 minutes), so the learner's pages were refused 429
    on every other process; it stops counting once the dead process's lease
    lapses. While the process lives, it renews the lease and its stream
    counts."""
    import os
    import signal

    import redis
    from django.conf import settings

    env = {"STREAM_MAX_PER_LEARNER": "1", "STREAM_LEASE_SECONDS": "2"}
    url = db_stack.start_web(asgi=True, workers=1, **env)
    web = db_stack.workers[-1]
    host, port = urlsplit(url).hostname, urlsplit(url).port
    learner = make_user("killed")
    key = token_issue(user=learner)[1]
    first, second = (
        f"/api/v1/submissions/{s.pk}/events/"
        for s in Submission.objects.bulk_create(
            Submission(user=learner, exercise=block_exercise, code="x", seed=n,
                       status="queued", lane="held")  # a lane no worker takes
            for n in range(2)
        )
    )  # fmt: skip
    counted = redis.Redis.from_url(settings.REDIS_URL)
    slots = f"{db_stack.queue}:streams:{learner.pk}"

    async def scenario() -> None:
        stream = await open_stream(host, port, first, key)
        following = asyncio.create_task(follow(stream))
        await asyncio.wait_for(stream.arrived.wait(), 30)
        (entry,) = counted.zrange(slots, 0, -1)
        lease = f"{db_stack.queue}:streams:process:{entry.split(b':')[0].decode()}"
        renewed, last = 0, counted.pttl(lease)
        while renewed < 2:  # two renewals: past the lease's own time
            await asyncio.sleep(0.2)
            now = counted.pttl(lease)
            assert now > 0, "the lease lapsed while its process lived"
            renewed, last = renewed + (now > last), now
        other = await open_stream(host, port, second, key)
        assert other.status == 429, other.body  # the live stream still counts
        os.killpg(web.pid, signal.SIGKILL)
        await asyncio.to_thread(web.wait)
        db_stack.workers.remove(web)
        await asyncio.wait_for(following, 10)  # its connection dropped
        assert counted.zcard(slots) == 1  # nothing gave the slot back
        again = urlsplit(
            await asyncio.to_thread(db_stack.start_web, asgi=True, workers=1, **env)
        ).port
        deadline = asyncio.get_running_loop().time() + 20
        while True:
            back = await open_stream(host, again, first, key)
            if back.status == 200:
                break
            assert back.status == 429, back.body
            assert asyncio.get_running_loop().time() < deadline, (
                "the learner is still refused 20 s after the kill"
            )
            await asyncio.sleep(0.5)
        back.close()

    asyncio.run(scenario())
