"""The submission event stream: server-sent events pushed through real Redis."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from benchmarks.sse_client import event_of
from grader import events
from grader.models import Submission

pytestmark = pytest.mark.django_db(transaction=True)


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def read_events(response, until=None):
    """Parse `event:`/`data:` pairs off a streaming response as they come."""
    buffer = b""
    for chunk in response.streaming_content:
        buffer += chunk
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            event = event_of(block)
            if event:
                yield event
                if until and until(event):
                    return


def test_a_finished_submission_sends_its_verdict_once_and_ends(learner, block_exercise):
    done = Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", seed=1, status="passed",
        score=1.0, finished_at=timezone.now(),
    )  # fmt: skip
    response = client_for(learner).get(
        reverse("api-submission-events", args=[done.pk]),
        HTTP_ACCEPT="text/event-stream",
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    received = list(read_events(response))
    assert [name for name, _ in received] == ["status"]
    assert received[0][1]["status"] == "passed" and received[0][1]["terminal"]


def test_a_change_is_pushed_the_moment_a_worker_publishes_it(learner, block_exercise):
    queued = Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", seed=1, status="queued"
    )
    response = client_for(learner).get(
        reverse("api-submission-events", args=[queued.pk]),
        HTTP_ACCEPT="text/event-stream",
    )
    stream = read_events(response, until=lambda event: event[1]["terminal"])
    first = next(stream)
    assert first[1]["status"] == "queued" and first[1]["queue_position"] == 1
    saved_at = {}

    def worker():
        time.sleep(0.3)
        Submission.objects.filter(pk=queued.pk).update(status="passed", score=1.0)
        saved_at["t"] = time.monotonic()
        events.submission_changed(queued.pk)
        connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    name, data = next(stream)
    arrived = time.monotonic()
    thread.join()
    response.close()
    assert (name, data["status"], data["terminal"]) == ("status", "passed", True)
    # pushed, not found by the stream's own 2 s re-read
    assert arrived - saved_at["t"] < 1.0


def test_someone_elses_stream_is_a_json_404(learner, block_exercise, make_user):
    queued = Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", seed=1, status="queued"
    )
    response = client_for(make_user("olga")).get(
        reverse("api-submission-events", args=[queued.pk]),
        HTTP_ACCEPT="text/event-stream",
    )
    assert response.status_code == 404
    assert response.json() == {"detail": "No such submission."}
    anonymous = APIClient().get(
        reverse("api-submission-events", args=[queued.pk]),
        HTTP_ACCEPT="text/event-stream",
    )
    assert anonymous.status_code in (401, 403)
    assert "detail" in anonymous.json()
