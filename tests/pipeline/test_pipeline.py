"""Submissions go through the real API, Redis broker, Celery workers and sandbox,
and none is lost or stuck whatever we do to them."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.error
import urllib.request

import pytest
from django.db import connection

from grader.models import Exercise, Submission
from quiz.content.loader import content_load
from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import Stack, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
WRONG = "def block_param_count(n_embd):\n    return 12 * n_embd**2\n"
# Sleeps on its first call only, so a grade lasts long enough to be interrupted.
SLOW_RIGHT = (
    "import time\n_calls = []\n"
    "def block_param_count(n_embd):\n"
    "    if not _calls:\n        _calls.append(1)\n        time.sleep(4)\n"
    "    return 12 * n_embd**2 + 13 * n_embd\n"
)
TERMINAL = {"passed", "failed", "error", "cancelled"}
SLOW_BUDGET = {"time_budget_seconds": 15}


def db_url_of_this_test() -> str:
    name = connection.settings_dict["NAME"]
    return f"postgres://postgres@127.0.0.1:5432/{name}"


@pytest.fixture
def exercises(transactional_db):
    content_load(root=PROJECT_ROOT / "content")
    exercise = Exercise.objects.get(slug="block-param-count")
    exercise.options = SLOW_BUDGET  # SLOW_RIGHT must fit in its budget
    exercise.save()
    return exercise


@pytest.fixture
def stack(exercises, db_stack):
    return db_stack


def status_of(pk) -> str:
    return Submission.objects.values_list("status", flat=True).get(pk=pk)


def wait_terminal(pks, timeout: float = 180) -> dict:
    def done():
        rows = dict(Submission.objects.filter(pk__in=pks).values_list("pk", "status"))
        return rows if all(s in TERMINAL for s in rows.values()) else None

    return wait_for(done, timeout=timeout, interval=0.5, what="terminal statuses")


class Api:
    """A tiny HTTP client for the live server, with token auth."""

    def __init__(self, base: str, username: str, password: str):
        self.base = base
        token = self.call(
            "POST", "/api/v1/auth/token/", {"username": username, "password": password}
        )[1]["token"]
        self.headers = {"Authorization": f"Token {token}"}

    def call(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={
                "Content-Type": "application/json",
                **getattr(self, "headers", {}),
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")


def test_an_api_submission_is_graded_by_a_worker(stack, live_server, make_user):
    make_user("alice")
    stack.start_worker()
    api = Api(live_server.url, "alice", "pw-Secret-123")
    code, created = api.call(
        "POST", "/api/v1/exercises/block-param-count/submissions/", {"code": RIGHT}
    )
    assert code == 202 and created["status"] == "queued"
    code, wrong = api.call(
        "POST", "/api/v1/exercises/block-param-count/submissions/", {"code": WRONG}
    )
    wait_terminal([created["id"], wrong["id"]])
    _, result = api.call("GET", f"/api/v1/submissions/{created['id']}/")
    assert result["status"] == "passed" and result["score"] == 1.0
    assert result["checks"] and all(c["passed"] for c in result["checks"])
    assert result["timings"]["grade_ms"] > 0 and result["queue_position"] is None
    _, result = api.call("GET", f"/api/v1/submissions/{wrong['id']}/")
    assert result["status"] == "failed" and 0 <= result["score"] < 1
    assert any("13" in c["message"] for c in result["checks"] if not c["passed"])


def _running_pid(pk) -> int:
    def claimed():
        row = Submission.objects.values("status", "claimed_by").get(pk=pk)
        return row["claimed_by"] if row["status"] == "running" else None

    claimed_by = wait_for(claimed, timeout=120, what="the grade to start")
    return int(claimed_by.rpartition(":")[2])


def _submit(exercise, user, code) -> str:
    from grader.services import submission_create

    return str(submission_create(user=user, exercise=exercise, code=code).pk)


def _kill_worker(stack: Stack, pid: int) -> None:
    """SIGKILL a whole grading process (its sandbox dies with it)."""
    os.killpg(pid, signal.SIGKILL)
    for proc in stack.workers:
        if proc.pid == pid:
            proc.wait(timeout=30)


def test_a_worker_killed_mid_grade_regrades_once(stack, exercises, make_user):
    stack.start_worker()
    pk = _submit(exercises, make_user("bob"), SLOW_RIGHT)
    _kill_worker(stack, _running_pid(pk))
    assert status_of(pk) == "running"  # abandoned, until a worker takes it back
    stack.start_worker()  # as a supervisor restarts it: it re-queues the row
    wait_terminal([pk])
    row = Submission.objects.get(pk=pk)
    assert row.status == "passed" and row.grading_attempts == 2


def test_a_second_crash_ends_in_error_that_is_not_the_learners_fault(
    stack, exercises, make_user
):
    stack.start_worker()
    pk = _submit(exercises, make_user("carol"), SLOW_RIGHT)
    first = _running_pid(pk)
    _kill_worker(stack, first)
    stack.start_worker()
    wait_for(
        lambda: Submission.objects.filter(pk=pk, grading_attempts=2, status="running")
        .exclude(claimed_by__endswith=f":{first}")
        .exists(),
        timeout=120,
        what="the second attempt",
    )
    _kill_worker(stack, _running_pid(pk))
    stack.start_worker()
    wait_terminal([pk])
    row = Submission.objects.get(pk=pk)
    assert row.status == "error"
    assert "this was not your code's fault" in row.checks[0]["message"]


def test_submissions_queued_across_a_redis_restart_are_all_graded(
    exercises, make_user, private_redis, settings
):
    stack = Stack(database_url=db_url_of_this_test(), redis_url=private_redis.url)
    user = make_user("dave")
    pks = stack.submit(user.username, [RIGHT] * 5, create_user=False)
    private_redis.restart()  # keeps nothing: the five messages are gone
    try:
        stack.start_worker(beat=True)
        statuses = wait_terminal(pks)
    finally:
        stack.stop_workers()
    assert set(statuses.values()) == {"passed"}


def test_many_submissions_from_many_users_are_all_graded_once(
    stack, live_server, make_user, settings
):
    settings.SUBMISSION_MAX_OUTSTANDING = 10  # each learner queues ten at once
    users = [make_user(f"user{i}") for i in range(20)]
    stack.start_worker(slots=2)
    apis = [Api(live_server.url, u.username, "pw-Secret-123") for u in users]
    created: list[str] = []
    latencies: list[float] = []
    lock = threading.Lock()

    def post_ten(api):
        for n in range(10):
            code, body = api.call(
                "POST",
                "/api/v1/exercises/block-param-count/submissions/",
                {"code": RIGHT if n % 2 else WRONG},
            )
            assert code == 202, body
            with lock:
                created.append(body["id"])

    def probe_health(stop):
        while not stop.is_set():
            start = time.monotonic()
            with urllib.request.urlopen(live_server.url + "/healthz", timeout=30) as r:
                assert r.status == 200
            latencies.append(time.monotonic() - start)
            time.sleep(0.2)

    stop = threading.Event()
    prober = threading.Thread(target=probe_health, args=(stop,))
    prober.start()
    threads = [threading.Thread(target=post_ten, args=(api,)) for api in apis]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = wait_terminal(created, timeout=600)
    stop.set()
    prober.join()
    assert len(created) == len(set(created)) == 200
    assert Submission.objects.count() == 200
    assert sorted(statuses.values()).count("passed") == 100
    assert sorted(statuses.values()).count("failed") == 100
    assert set(Submission.objects.values_list("grading_attempts", flat=True)) == {1}
    assert latencies, "the web was never probed"
    print(
        f"health during the burst: {len(latencies)} probes, max {max(latencies):.3f}s"
    )


def test_a_postgresql_restart_during_grading_loses_nothing(
    private_postgres, private_redis
):
    import psycopg

    stack = Stack(database_url=private_postgres.url, redis_url=private_redis.url)
    stack.manage("migrate", "--no-input")
    stack.manage("load_content")
    stack.python(
        "from grader.models import Exercise\n"
        f"Exercise.objects.filter(slug='block-param-count').update(options={SLOW_BUDGET})"
    )
    codes = [SLOW_RIGHT, SLOW_RIGHT, RIGHT, WRONG]
    pks = stack.submit("erin", codes, create_user=True)

    def statuses() -> dict:
        try:
            with psycopg.connect(private_postgres.url, connect_timeout=2) as conn:
                rows = conn.execute("SELECT id::text, status FROM grader_submission")
                return dict(rows.fetchall())
        except psycopg.OperationalError:
            return {}

    stack.start_worker()
    try:
        wait_for(lambda: "running" in statuses().values(), timeout=180, what="a grade")
        private_postgres.restart()
        final = wait_for(
            lambda: (s := statuses()) and all(v in TERMINAL for v in s.values()) and s,
            timeout=240,
            interval=1,
            what="every submission to finish",
        )
    finally:
        stack.stop_workers()
    assert sorted(final) == sorted(pks)
    assert [final[pk] for pk in pks] == ["passed", "passed", "passed", "failed"]
