"""In Debian's Chromium: a submission page whose event stream keeps failing
waits longer before each new try, polls once the tries are used up, and
still shows the verdict.

Why: a web process that stops cuts all its pages' streams at once. With the
browser's own reconnects (every 500 ms, the same moment for every page) and
a half-second poll after three failures, a thousand pages came back to the
restarted process at once and all stayed polling: its pages took 25 s
(stream_bench.py's web restart). static/js/submission.js now reconnects by
itself, each wait doubled and drawn between its half and its whole.
"""

from __future__ import annotations

import re
import time

import pytest

from grader.models import Submission
from tests.conftest import sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

DETAIL = re.compile(r"/api/v1/submissions/[\w-]+/$")


def test_a_failing_stream_backs_off_then_polls_and_shows_the_verdict(
    browser, live_server, make_user, block_exercise
):
    learner = make_user("cut-off")
    waiting = Submission.objects.create(
        user=learner, exercise=block_exercise, code="x", seed=0,
        status="queued", lane="held",  # a lane no worker takes
    )  # fmt: skip
    page = browser.new_page()
    sign_in(page, live_server.url, "cut-off")
    tries: list[float] = []
    polls: list[float] = []

    def cut(route):
        tries.append(time.monotonic())
        if len(tries) == 1:  # a stream that ends, saying to retry in 500 ms
            route.fulfill(
                status=200, content_type="text/event-stream", body="retry: 500\n\n"
            )
        else:
            route.abort("connectionreset")  # as a stopped web process does

    page.route("**/events/", cut)
    page.on(
        "request",
        lambda request: DETAIL.search(request.url) and polls.append(time.monotonic()),
    )
    page.goto(f"{live_server.url}/submissions/{waiting.pk}/")
    page.wait_for_function("() => document.getElementById('status') !== null")
    deadline = time.monotonic() + 30
    while not polls and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert polls and len(tries) >= 3, (tries, polls)
    gaps = [tries[1] - tries[0], tries[2] - tries[1]]
    # Drawn from 0.5-1 s, then 1-2 s, then 2-4 s before the poll (timer
    # slack aside), not the 500 ms the stream asked the browser for.
    assert gaps[0] >= 0.45 and gaps[1] >= 0.95, gaps
    assert polls[0] - tries[2] >= 1.9, polls[0] - tries[2]

    # The server answered the poll, so the page tries its stream again.
    deadline = time.monotonic() + 10
    while len(tries) < 4 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert len(tries) == 4 and tries[3] >= polls[0], (tries, polls)

    # The verdict comes by the next poll (4-8 s after that try).
    Submission.objects.filter(pk=waiting.pk).update(status="cancelled")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'cancelled'",
        timeout=20_000,
    )
    assert len(polls) >= 2
