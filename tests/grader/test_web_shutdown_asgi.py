"""A web process stopped with SIGTERM (a deploy, a restart) answers every
request it has taken, on the server as deployed (gunicorn with the uvicorn
worker of config/web_worker.py on config.asgi).

Behind nginx, a request a stopping process drops is a 502 that nginx does
not send to the other process when it is a POST (it may have been acted on):
the deadline drill saw one, `502 POST submit`, as a web process restarted.
Its streams being cut is tested in test_stream_slots_asgi.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from django.db import connection

from config.web_worker import STREAMS_CUT_AFTER, accept_queued
from quiz.core.api.tokens import token_issue
from tests.pipeline.conftest import wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def shutting_down(log_path: str) -> float | None:
    """When the worker's log says it began to shut down (a monotonic time
    close to it), or None."""
    return time.monotonic() if "Shutting down" in Path(log_path).read_text() else None


def test_a_request_running_past_the_streams_cut_still_gets_its_answer(
    db_stack, make_user, block_exercise
):
    """A submission whose request is held in the database when SIGTERM
    arrives, and for longer than the streams are given, is answered 202
    (it was cut, 502 behind nginx, at 3 s)."""
    url = db_stack.start_web(asgi=True, workers=1)
    web = db_stack.workers[-1]
    key = token_issue(user=make_user("in-flight"))[1]
    dsn = f"postgres://postgres@127.0.0.1:5432/{connection.settings_dict['NAME']}"
    answer: dict = {}

    def submit() -> None:
        request = urllib.request.Request(
            f"{url}/api/v1/exercises/{block_exercise.slug}/submissions/",
            data=json.dumps({"code": block_exercise.solution}).encode(),
            headers={
                "Authorization": f"Token {key}",
                "Content-Type": "application/json",
            },
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer["status"] = response.status
        except Exception as exc:  # noqa: BLE001 - what the learner would see
            answer["error"] = repr(exc)

    with psycopg.connect(dsn) as holder, psycopg.connect(dsn, autocommit=True) as watch:
        holder.execute("LOCK TABLE grader_submission IN ACCESS EXCLUSIVE MODE")
        sender = threading.Thread(target=submit)
        sender.start()
        wait_for(
            lambda: watch.execute(
                "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            ).fetchone(),
            timeout=30,
            what="the submission to wait on the lock",
        )
        os.killpg(web.pid, signal.SIGTERM)
        began = wait_for(lambda: shutting_down(web.log_path), timeout=30, interval=0.02)
        # The property is a duration: held past the time the streams get
        # (0.5 s past it, leaving the view 2 s to answer on a busy machine).
        time.sleep(max(began + STREAMS_CUT_AFTER + 0.5 - time.monotonic(), 0))
        holder.rollback()  # the lock goes; the view goes on
        sender.join(timeout=30)
    assert answer == {"status": 202}, Path(web.log_path).read_text()[-3000:]
    assert block_exercise.submissions.count() == 1
    web.wait(timeout=30)
    log = Path(web.log_path).read_text()
    assert "Cancelling" not in log and "SIGKILL" not in log, log[-2000:]


def test_a_connection_taken_before_sigterm_gets_its_request_answered(db_stack):
    """A connection the process holds (accepted, or queued by the kernel)
    whose request arrives only after SIGTERM is answered, not reset."""
    url = db_stack.start_web(asgi=True, workers=1)
    web = db_stack.workers[-1]
    host, port = urlsplit(url).hostname, urlsplit(url).port
    with socket.create_connection((host, port), timeout=30) as early:
        os.killpg(web.pid, signal.SIGTERM)
        wait_for(lambda: shutting_down(web.log_path), timeout=30, interval=0.02)
        early.sendall(f"GET /healthz HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        reply = b""
        while chunk := early.recv(65536):
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    # And the process is gone: no new connection is taken.
    web.wait(timeout=30)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, port), timeout=5).close()


def test_stopping_takes_every_connection_the_kernel_queued():
    """The listening socket is closed only once its queue is empty, so no
    queued connection is reset (closing a socket resets what it queued)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=16)
    clients = [socket.create_connection(listener.getsockname()) for _ in range(3)]
    try:
        taken = accept_queued(listener)
        assert len(taken) == 3
        assert {c.getpeername() for c in taken} == {c.getsockname() for c in clients}
        assert all(not c.getblocking() for c in taken)  # for the event loop
        assert accept_queued(listener) == []  # nothing waited for
        listener.close()
        assert accept_queued(listener) == []
    finally:
        for sock in [*clients, *taken]:
            sock.close()
        listener.close()
