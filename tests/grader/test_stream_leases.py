"""A learner's streams count only while their web process holds its lease
(grader.stream_caps), against the real Redis: a process killed outright
leaves its entries behind, and they must not lock the learner out. A real
process renewing its lease, killed, and its learner back:
test_stream_slots_asgi.py."""

from __future__ import annotations

import time
import uuid

import pytest
import redis

from grader import stream_caps


@pytest.fixture
def caps(settings):
    settings.CELERY_TASK_DEFAULT_QUEUE = f"leases-{uuid.uuid4().hex[:8]}"
    settings.STREAM_MAX_PER_LEARNER = 1
    client = redis.Redis.from_url(settings.REDIS_URL)
    yield client, f"{settings.CELERY_TASK_DEFAULT_QUEUE}:streams:7"
    for key in client.scan_iter(f"{settings.CELERY_TASK_DEFAULT_QUEUE}:*"):
        client.delete(key)


def test_a_dead_processes_stream_stops_counting_and_is_removed(caps):
    client, slots = caps
    client.zadd(slots, {"deadproc:a-stream": time.time() + 300})  # no lease
    stream_caps.stream_check(7)  # not refused
    release = stream_caps.stream_take(7, lifetime=60)
    assert client.zrange(slots, 0, -1) != [b"deadproc:a-stream"]
    assert client.zcard(slots) == 1  # this process's own, the dead one removed
    release()
    assert client.zcard(slots) == 0


def test_a_live_processes_stream_counts(caps, settings):
    client, slots = caps
    client.set(f"{settings.CELERY_TASK_DEFAULT_QUEUE}:streams:process:other", "1")
    client.zadd(slots, {"other:a-stream": time.time() + 300})
    with pytest.raises(stream_caps.StreamRefused) as refused:
        stream_caps.stream_check(7)
    assert refused.value.status == 429
    with pytest.raises(stream_caps.StreamRefused):
        stream_caps.stream_take(7, lifetime=60)
    assert client.zrange(slots, 0, -1) == [b"other:a-stream"]
