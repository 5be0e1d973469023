"""In Debian's Chromium: submit a wrong then a right tie-weights answer and watch
each verdict appear on the page without a reload, graded by a real worker.

The verdicts test runs on the deployed web stack (gunicorn with a uvicorn
worker: the stream waits on the event loop, grader.stream_hub); the
running-and-cancel test on the test server (the WSGI stream)."""

from __future__ import annotations

import re
import socket
import time
from urllib.parse import urlsplit

import pytest

from quiz.content.loader import content_load
from tests.conftest import PROJECT_ROOT, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # one warm worker (tests/conftest.py)
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
WRONG = (
    "import torch\n\n"
    "def tie_weights(model):\n"
    "    copy = model.transformer.wte.weight.detach().clone()\n"
    "    model.lm_head.weight = torch.nn.Parameter(copy)\n"
)
RIGHT = (
    "def tie_weights(model):\n    model.lm_head.weight = model.transformer.wte.weight\n"
)


@pytest.fixture
def browser_page(browser):
    return browser.new_page()


@pytest.fixture
def worker_stack(warm):
    content_load(root=PROJECT_ROOT / "content")
    warm.ready(slots=2)
    return warm


@pytest.fixture
def asgi_server(worker_stack):
    """The deployed web stack on this test's database and the warm worker's
    queue (its wake-ups and its events' channels); DEBUG for static files."""
    from django.conf import settings
    from django.db import connection

    from tests.pipeline.conftest import Stack

    name = connection.settings_dict["NAME"]
    stack = Stack(
        database_url=f"postgres://postgres@127.0.0.1:5432/{name}",
        redis_url=settings.REDIS_URL,
        CELERY_QUEUE=settings.CELERY_TASK_DEFAULT_QUEUE,  # the warm worker's
    )
    # One stream per process, so the test can take the only one (below).
    yield stack.start_web(asgi=True, workers=1, DEBUG="1", STREAM_MAX_PER_PROCESS="1")
    stack.stop_workers()


def hold_the_stream(base: str, token: str, submission_id) -> socket.socket:
    """Open an event stream and keep it: the server's only one (its cap)."""
    url = urlsplit(base)
    deadline = time.monotonic() + 30
    while True:  # the page's ended stream frees its place a moment later
        sock = socket.create_connection((url.hostname, url.port), timeout=10)
        sock.sendall(
            f"GET /api/v1/submissions/{submission_id}/events/ HTTP/1.1\r\n"
            f"Host: {url.netloc}\r\nAuthorization: Token {token}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        if sock.recv(4096).startswith(b"HTTP/1.1 200"):
            return sock
        sock.close()
        assert time.monotonic() < deadline, "the stream's place was never freed"
        time.sleep(0.2)


def submit_and_watch(page, code: str, expected: str) -> None:
    page.fill("#code", code)
    page.click(".code-form button[type=submit]")
    page.wait_for_url("**/submissions/**")
    page.evaluate("window.__samePage = true")  # lost if the page reloads
    page.wait_for_function(
        "() => ['passed','failed','error']"
        ".includes(document.getElementById('status').textContent)",
        timeout=180_000,
    )
    assert page.text_content("#status") == expected
    assert page.evaluate("window.__samePage === true"), "the page reloaded"


def test_verdicts_appear_live_without_reloading(browser_page, asgi_server, make_user):
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lea = make_user("lea")
    # The server checks passwords with production's hashers, not the tests' MD5.
    lea.password = PBKDF2PasswordHasher().encode("pw-Secret-123", "lea-salt")
    lea.save(update_fields=["password"])
    page = browser_page
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    sign_in(page, asgi_server, "lea")
    page.goto(asgi_server + "/exercises/tie-weights/")
    page.screenshot(path=str(ARTIFACTS / "exercise.png"), full_page=True)

    submit_and_watch(page, WRONG, "failed")
    assert "copied wte instead of sharing it" in page.text_content("#checks")
    page.screenshot(path=str(ARTIFACTS / "submission-failed.png"), full_page=True)

    page.goto(asgi_server + "/exercises/tie-weights/")
    submit_and_watch(page, RIGHT, "passed")
    assert "FAIL" not in page.text_content("#checks")
    page.screenshot(path=str(ARTIFACTS / "submission-passed.png"), full_page=True)
    # Pushed over the event stream: the page never polled the submission.
    assert any(url.endswith("/events/") for url in requests)
    polled = [u for u in requests if re.search(r"/api/v1/submissions/[\w-]+/$", u)]
    assert polled == []

    # Past the server's cap the stream is refused (503, Retry-After) and the
    # page polls instead: the verdict still appears without a reload.
    from grader.models import Exercise, Submission
    from quiz.core.api.tokens import token_issue

    olga = make_user("olga")
    waiting = Submission.objects.create(
        user=olga, exercise=Exercise.objects.get(slug="tie-weights"), code="x",
        seed=0, status="queued", lane="held",  # a lane no worker takes
    )  # fmt: skip
    held = hold_the_stream(asgi_server, token_issue(user=olga)[1], waiting.pk)
    try:
        requests.clear()
        page.goto(asgi_server + "/exercises/tie-weights/")
        submit_and_watch(page, RIGHT, "passed")
    finally:
        held.close()
        Submission.objects.filter(pk=waiting.pk).update(status="cancelled")
    polled = [u for u in requests if re.search(r"/api/v1/submissions/[\w-]+/$", u)]
    assert polled and any(url.endswith("/events/") for url in requests)


LOOP = "def tie_weights(model):\n    while True:\n        pass\n"


def test_a_running_grade_shows_its_time_and_cancels_in_place(
    browser_page, worker_stack, live_server, make_user
):
    from grader.models import Exercise, Submission

    Exercise.objects.filter(slug="tie-weights").update(
        options={"time_budget_seconds": 15}
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    make_user("lea")
    page = browser_page
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    sign_in(page, live_server.url, "lea")
    page.goto(live_server.url + "/exercises/tie-weights/")
    assert "15 s of CPU time per grade" in page.text_content("#time-budget")
    page.fill("#code", LOOP)
    page.click(".code-form button[type=submit]")
    page.wait_for_url("**/submissions/**")
    page.evaluate("window.__samePage = true")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'running'",
        timeout=180_000,
    )
    first = page.text_content("#elapsed")
    page.wait_for_timeout(600)
    later = page.text_content("#elapsed")
    assert first.startswith("grading for ") and later.startswith("grading for ")
    assert float(later.split()[2]) > float(first.split()[2])  # it ticks
    assert page.text_content("#budget") == "15 s of CPU time"
    page.screenshot(path=str(ARTIFACTS / "submission-running.png"), full_page=True)

    page.click("#cancel")
    page.wait_for_function(
        "() => document.getElementById('status').textContent === 'cancelled'",
        timeout=30_000,
    )
    assert page.evaluate("window.__samePage === true"), "the page reloaded"
    assert "does not count as an attempt" in page.text_content("#cancelled-note")
    assert page.locator("#cancel-form").count() == 0
    pk = page.url.rstrip("/").rsplit("/", 1)[1]
    assert Submission.objects.get(pk=pk).status == "cancelled"
    # pushed over the event stream: the page never had to poll the API
    polled = [url for url in requests if url.endswith(f"/api/v1/submissions/{pk}/")]
    assert polled == [] and any(url.endswith("/events/") for url in requests)
    page.screenshot(path=str(ARTIFACTS / "submission-cancelled.png"), full_page=True)
