"""A task makes a round trip through the real Redis broker and a real worker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def worker_queue():
    """Start a real `celery worker` process on a queue of its own."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "-Q",
            queue,
            "--hostname",
            f"{queue}@%h",
        ],
        cwd=PROJECT_ROOT,
        env={**os.environ},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    yield queue, proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_a_task_round_trips_through_redis_and_a_worker_process(worker_queue):
    from grader.tasks import ping

    queue, proc = worker_queue
    deadline = time.monotonic() + 60
    result = ping.apply_async(args=[{"n": 1, "text": "héllo"}], queue=queue)
    value = result.get(timeout=max(1, deadline - time.monotonic()))
    assert value["echo"] == {"n": 1, "text": "héllo"}
    assert value["worker_pid"] == proc.pid != os.getpid()


def test_the_worker_refuses_pickled_messages():
    from config.celery import app

    assert app.conf.accept_content == ["json"]
    assert app.conf.task_serializer == "json"
