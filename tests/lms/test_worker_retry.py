"""Through a real Celery worker: a graded submission's score reaches the LMS,
and an LMS that answered 503 gets it again after Celery's backoff.

The worker is the session's warm one-slot worker (tests/conftest.py `warm`):
it grades and sends scores as any worker does, without 10 to 15 s of start."""

from __future__ import annotations

import time

import pytest
import requests

from lms.models import LmsAccount, ScoreSync
from tests.lms.platform import INSTRUCTOR, LEARNER
from tests.lms.test_grades_and_links import RIGHT, make_assignment
from tests.pipeline.conftest import wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # the shared warm worker
]


def test_a_worker_sends_the_score_and_retries_after_a_503(
    warm, lms_platform, live_server, block_exercise
):
    platform, tool = lms_platform, live_server.url
    platform.members = [
        {"user_id": "t-1", "roles": [INSTRUCTOR]},
        {"user_id": "s-1", "roles": [LEARNER]},
    ]
    warm.ready(slots=1)
    stack = warm.workers.stacks[1]
    for sub, role in (("t-1", INSTRUCTOR), ("s-1", LEARNER)):
        with requests.Session() as person:
            response, _ = platform.launch(person, tool, sub=sub, roles=[role])
            assert response.status_code == 302
    make_assignment(block_exercise)
    platform.fail_scores = 1
    learner = LmsAccount.objects.get(sub="s-1").user
    stack.submit(learner.username, [RIGHT], create_user=False)
    deadline = time.monotonic() + 90
    while not platform.scores and time.monotonic() < deadline:
        time.sleep(0.5)
    (score,) = platform.scores
    assert (score["userId"], score["scoreGiven"]) == ("s-1", 100.0)
    refused = [r for r in platform.requests if r.path.endswith("/scores")]
    assert len(refused) == 2  # the 503, then the retry
    # The platform has the score before the worker records that it was sent:
    # wait for the row (on a busy machine the save comes a moment later).
    wait_for(
        ScoreSync.objects.filter(sent_version=1).exists,
        timeout=60,
        what="the worker to record the score as sent",
    )
    row = ScoreSync.objects.get()
    assert (row.sent_version, row.attempts, row.last_error) == (1, 2, "")
