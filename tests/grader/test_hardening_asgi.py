"""Issue 43's attacks over HTTP against the web server as deployed (gunicorn
with a uvicorn worker, deploy/gunicorn.conf.py): what the in-process tests
prove of the views holds through the real server too, whose parser accepts
any method token and passes bytes Django's test client would never send.

The stream slots have their own test on this server
(test_stream_slots_asgi.py), as does /metrics with two workers
(test_metrics_processes.py).
"""

from __future__ import annotations

import http.client
import json
import random
import string
from urllib.parse import urlsplit

import pytest
from prometheus_client.parser import text_string_to_metric_families

from quiz.core.api.tokens import token_issue

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def call(url: str, method: str, path: str, body=None, headers=None):
    """One request on a new connection: (status, parsed JSON or text)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        data = json.dumps(body) if isinstance(body, dict) else body
        sent = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
    finally:
        connection.close()
    try:
        return response.status, json.loads(text)
    except ValueError:
        return response.status, text


def request_series(text: str) -> set[tuple[str, str]]:
    """(method, view) of each series of the request histogram."""
    return {
        (sample.labels["method"], sample.labels["view"])
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "course_request_seconds_count"
    }


def test_the_deployed_server_refuses_each_attack_with_a_4xx(db_stack, make_user):
    url = db_stack.start_web(asgi=True, workers=1)
    learner = make_user("hostile")
    learn_key = token_issue(user=learner)[1]
    auth = {"Authorization": f"Token {learn_key}"}

    # An integer past Python's digit limit, to the anonymous login: a 400
    # naming the field, not a 500.
    huge = '{"username": ' + "9" * 5000 + ', "password": "x"}'
    status, body = call(url, "POST", "/api/v1/auth/token/", huge)
    assert status == 400, body
    assert "username" in json.dumps(body)
    # A lone surrogate as a key (escaped: the body itself is UTF-8).
    status, body = call(url, "POST", "/api/v1/auth/token/", '{"\\ud800": 1}')
    assert status == 400, body

    # An upgrade to a WebSocket, which no route takes (nginx drops the header,
    # but the server may be reached directly): answered as the HTTP request
    # it also is, not a 500 from Django refusing a websocket scope.
    upgrade = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
    }
    status, body = call(url, "GET", "/healthz", headers=upgrade)
    assert status == 200, body

    # A learn token (what `course login` gets) may not list or revoke tokens.
    status, body = call(url, "GET", "/api/v1/auth/tokens/", headers=auth)
    assert status == 403 and body["scopes_needed"] == ["manage-tokens"], body

    # Odd methods and random paths from a stranger: no series of theirs.
    before = request_series(call(url, "GET", "/metrics")[1])
    rng = random.Random(43)
    for _ in range(120):
        method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 11)))
        path = f"/zz{rng.getrandbits(40)}/" + rng.choice(["", "api/v1/", "x.js"])
        status, _ = call(url, method, path)
        assert status < 500, (method, path, status)
    added = request_series(call(url, "GET", "/metrics")[1]) - before
    assert added <= {("other", "unmatched"), ("GET", "metrics")}, added
