"""One Redis subscription per web process, fanned out to all its event streams.

Under ASGI every open submission page waits on an asyncio.Event here, not
on a thread or a Redis connection of its own. The hub holds one pattern
subscription to the deployment's submission channels (grader.events) and
wakes the streams of the submission a message names; each then reads its
own state once. A ticker refreshes the queue position of every queued
submission watched in this process together, at most once a second, in one
query, and wakes only the streams whose position changed.

If Redis goes away the hub wakes every stream (each reads once and ends;
EventSource reconnects, or the page polls) and subscribes again.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import defaultdict
from dataclasses import dataclass, field

import redis
import redis.asyncio as aredis
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

from grader.selectors import submission_queue_places

log = logging.getLogger(__name__)
QUEUE_REFRESH_SECONDS = 1.0
RETRY_SECONDS = 1.0


@dataclass(eq=False)
class Watch:
    """One open stream's interest in one submission."""

    submission_id: str
    user_id: int
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    queued: bool = False
    place: tuple | None = None  # (queue position, behind own) last sent


def off_the_loop(fn):
    """`fn` run in the executor's threads, giving its database connection back
    when done: a thread between ticks, or a stream between reads, holds none."""

    def run(*args):
        try:
            return fn(*args)
        finally:
            connection.close()

    return sync_to_async(run, thread_sensitive=False)


class Hub:
    """The process's subscription and the streams waiting on it."""

    def __init__(self) -> None:
        self.watches: dict[str, set[Watch]] = defaultdict(set)
        self.subscribed = asyncio.Event()
        self._tasks: list[asyncio.Task] = []

    def watch(self, submission_id, user_id: int) -> Watch:
        watch = Watch(str(submission_id), user_id)
        self.watches[watch.submission_id].add(watch)
        return watch

    def unwatch(self, watch: Watch) -> None:
        group = self.watches.get(watch.submission_id)
        if group is not None:
            group.discard(watch)
            if not group:
                del self.watches[watch.submission_id]

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._listen()),
            asyncio.create_task(self._refresh_queue()),
        ]

    def _wake_all(self) -> None:
        for group in self.watches.values():
            for watch in group:
                watch.changed.set()

    async def _listen(self) -> None:
        pattern = f"{settings.CELERY_TASK_DEFAULT_QUEUE}:submission:*"
        while True:
            client = aredis.Redis.from_url(
                settings.REDIS_URL,
                socket_connect_timeout=1,
                client_name=f"web-streams-{os.getpid()}",
            )
            pubsub = client.pubsub()
            try:
                await pubsub.psubscribe(pattern)
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is None:
                        continue
                    if message["type"] == "psubscribe":
                        self.subscribed.set()
                        continue
                    if message["type"] != "pmessage":
                        continue
                    channel = message["channel"].decode()
                    for watch in self.watches.get(channel.rsplit(":", 1)[1], ()):
                        watch.changed.set()
            except asyncio.CancelledError:
                raise
            except (redis.RedisError, OSError) as exc:
                log.warning("stream hub lost Redis: %s", exc)
            finally:
                self.subscribed.clear()
                self._wake_all()  # each stream reads once; ends if Redis is gone
                await pubsub.aclose()
                await client.aclose()
            await asyncio.sleep(RETRY_SECONDS)

    async def _refresh_queue(self) -> None:
        read = off_the_loop(submission_queue_places)
        while True:
            await asyncio.sleep(QUEUE_REFRESH_SECONDS)
            queued = [w for g in self.watches.values() for w in g if w.queued]
            if not queued:
                continue
            try:
                places = await read({w.submission_id: w.user_id for w in queued})
            except Exception:  # the database is down: streams stay as they are
                log.exception("stream hub: queue refresh failed")
                continue
            for watch in queued:
                if places.get(watch.submission_id) != watch.place:
                    watch.changed.set()


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


async def hub() -> Hub:
    """This event loop's hub, started (and subscribed) on first use.

    Raises redis.RedisError when Redis does not confirm the subscription in
    time; the stream then behaves as without Redis (the page polls).
    """
    loop = asyncio.get_running_loop()
    current = _hubs.get(loop)
    if current is None:
        for old in [lp for lp in _hubs if lp.is_closed()]:
            del _hubs[old]  # loops of finished tests
        current = _hubs[loop] = Hub()
        current.start()
    if not current.subscribed.is_set():
        try:
            await asyncio.wait_for(current.subscribed.wait(), timeout=2.0)
        except TimeoutError:
            raise redis.TimeoutError("Redis did not confirm the subscription") from None
    return current
