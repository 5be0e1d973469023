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
from tests.pipeline.conftest import (
    Stack,
    exercise_tree,
    gated_code,
    load_exercises,
    wait_for,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
WRONG = "def block_param_count(n_embd):\n    return 12 * n_embd**2\n"
TERMINAL = {"passed", "failed", "error", "cancelled"}
# A grade waiting at its gate (gated_code) is stopped at the wall-clock
# backstop of this budget (45 s): the tests open it, or kill its worker, first.
SLOW_BUDGET = {"time_budget_seconds": 15}


def db_url_of_this_test() -> str:
    name = connection.settings_dict["NAME"]
    return f"postgres://postgres@127.0.0.1:5432/{name}"


@pytest.fixture
def exercises(transactional_db):
    load_exercises("block-param-count")
    exercise = Exercise.objects.get(slug="block-param-count")
    exercise.options = SLOW_BUDGET  # a gated answer must wait within its budget
    exercise.save()
    return exercise


@pytest.fixture
def stack(exercises, db_stack):
    """A stack of this test's own, for tests that kill its workers."""
    return db_stack


def status_of(pk) -> str:
    return Submission.objects.values_list("status", flat=True).get(pk=pk)


def wait_terminal(pks, timeout: float = 180) -> dict:
    def rows():
        return dict(Submission.objects.filter(pk__in=pks).values_list("pk", "status"))

    def done():
        found = rows()
        return found if all(s in TERMINAL for s in found.values()) else None

    try:
        return wait_for(done, timeout=timeout, what="terminal statuses")
    except AssertionError as exc:
        waiting = {str(pk): s for pk, s in rows().items() if s not in TERMINAL}
        raise AssertionError(f"{exc}; still not done: {waiting}") from None


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


@pytest.mark.xdist_group("warm-workers")
def test_an_api_submission_is_graded_by_a_worker(
    exercises, warm, live_server, make_user
):
    make_user("alice")
    warm.ready(slots=2)
    metrics_url = f"http://127.0.0.1:{warm.workers.stacks[2].metrics_port}/metrics"
    before = worker_metrics(metrics_url)
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
    # The worker serves its own metrics (GRADER_METRICS_PORT): both grades.
    after = worker_metrics(metrics_url)
    for status in ("passed", "failed"):
        key = ("course_grades_total", (("status", status),))
        assert after[key] - before.get(key, 0) == 1, status
    light = (
        "course_grade_seconds_count",
        (("exercise", "block-param-count"), ("lane", "light")),
    )
    assert after[light] - before.get(light, 0) == 2
    assert after[("course_grading_slots", ())] == 2


def worker_metrics(url: str) -> dict:
    """A worker's /metrics, parsed by prometheus-client: (name, labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


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


def test_a_killed_worker_regrades_once_and_a_second_crash_ends_in_error(
    gate, stack, exercises, make_user
):  # the gate first: its folder outlives the workers (torn down in reverse)
    """A worker SIGKILLed mid-grade: the worker that replaces it grades the
    row again, once; a row whose grade crashed twice ends as an error that
    does not blame the learner."""
    one_crash = _submit(exercises, make_user("bob"), gated_code("bob"))
    two_crashes = _submit(exercises, make_user("carol"), gated_code("carol"))
    # Two slots: both grades start in this worker and wait at their gates.
    worker = {"slots": 2, "GRADER_BURST_SLOTS": "0", **gate.env}
    stack.start_worker(**worker)
    first = _running_pid(one_crash)
    assert _running_pid(two_crashes) == first
    _kill_worker(stack, first)
    # abandoned, until a worker takes them back
    assert status_of(one_crash) == status_of(two_crashes) == "running"
    gate.open("bob")  # bob's second attempt goes through; carol's waits again
    second = stack.start_worker(**worker)  # as a supervisor restarts it
    wait_terminal([one_crash])
    row = Submission.objects.get(pk=one_crash)
    assert (row.status, row.grading_attempts) == ("passed", 2), "regraded once"
    wait_for(
        lambda: Submission.objects.filter(
            pk=two_crashes, grading_attempts=2, status="running"
        )
        .exclude(claimed_by__endswith=f":{first}")
        .exists(),
        timeout=120,
        what="the second attempt",
    )
    assert _running_pid(two_crashes) == second.pid
    _kill_worker(stack, second.pid)
    # The next worker only takes back what the dead one left: it ends the row
    # and never grades it, so it may skip warming a pool (a cold runner).
    stack.start_worker(GRADER_RUNNER="cold")
    wait_terminal([two_crashes])
    row = Submission.objects.get(pk=two_crashes)
    assert (row.status, row.grading_attempts) == ("error", 2)
    assert "this was not your code's fault" in row.checks[0]["message"]


def test_a_sibling_takes_back_a_killed_workers_grade_before_its_restart(
    gate, stack, exercises, make_user
):
    """Two workers on one host, one killed mid-grade and not restarted: the
    other sees its process gone and grades the row again, once
    (GRADER_PEER_CHECK_SECONDS; without it the row waits for a restart or
    the lease, and no beat runs here)."""
    pk = _submit(exercises, make_user("dave"), gated_code("dave"))
    worker = {"GRADER_BURST_SLOTS": "0", "GRADER_PEER_CHECK_SECONDS": "1", **gate.env}
    first = stack.start_worker(**worker)
    assert _running_pid(pk) == first.pid
    sibling = stack.start_worker(**worker)
    stack.wait_ready(sibling)  # past its own start's look for dead workers
    _kill_worker(stack, first.pid)
    gate.open("dave")
    wait_terminal([pk])
    row = Submission.objects.get(pk=pk)
    assert (row.status, row.grading_attempts) == ("passed", 2), "regraded once"
    assert row.claimed_by.endswith(f":{sibling.pid}")


def test_a_starting_worker_measures_every_exercise_without_a_budget(db_stack):
    """GRADER_MEASURE_ON_START, as deployed: before any learner submits."""
    load_exercises("block-param-count", "tie-weights")
    assert Exercise.objects.filter(time_budget_seconds__isnull=True).count() == 2
    db_stack.start_worker(GRADER_MEASURE_ON_START="1")
    wait_for(
        lambda: not Exercise.objects.filter(time_budget_seconds__isnull=True).exists(),
        timeout=180,
        what="both exercises measured",
    )
    assert Submission.objects.count() == 0
    for exercise in Exercise.objects.all():
        assert exercise.reference_ms > 0 and exercise.verification["clock"] == "cpu"


def test_submissions_queued_across_a_redis_restart_are_all_graded(
    exercises, make_user, private_redis, settings
):
    stack = Stack(database_url=db_url_of_this_test(), redis_url=private_redis.url)
    user = make_user("dave")
    pks = stack.submit(user.username, [RIGHT] * 5, create_user=False)
    private_redis.restart()  # keeps nothing: the five messages are gone
    try:
        # One learner's five, graded one at a time: no burst slots to fork.
        stack.start_worker(beat=True, GRADER_BURST_SLOTS="0")
        statuses = wait_terminal(pks)
    finally:
        stack.stop_workers()
    assert set(statuses.values()) == {"passed"}


@pytest.mark.xdist_group("warm-workers")
def test_many_submissions_from_many_users_are_all_graded_once(
    exercises, warm, live_server, make_user, settings
):
    settings.SUBMISSION_MAX_OUTSTANDING = 10  # each learner queues ten at once
    users = [make_user(f"user{i}") for i in range(20)]
    warm.ready(slots=2)
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
    private_postgres, private_redis, gate, tmp_path
):
    import psycopg

    stack = Stack(database_url=private_postgres.url, redis_url=private_redis.url)
    tree = exercise_tree(tmp_path / "content", "block-param-count")
    # One process (each start imports Django and torch): migrate, load the
    # exercise with `load_content`, give it its budget, submit.
    setup = (
        "import io\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', '--no-input', stdout=io.StringIO())\n"
        f"call_command('load_content', {str(tree)!r}, stdout=io.StringIO())\n"
        "from grader.models import Exercise\n"
        f"Exercise.objects.filter(slug='block-param-count').update(options={SLOW_BUDGET})\n"
    )
    codes = [gated_code("erin"), gated_code("erin"), RIGHT, WRONG]
    pks = stack.submit("erin", codes, create_user=True, first=setup)

    def statuses() -> dict:
        try:
            with psycopg.connect(private_postgres.url, connect_timeout=2) as conn:
                rows = conn.execute("SELECT id::text, status FROM grader_submission")
                return dict(rows.fetchall())
        except psycopg.OperationalError:
            return {}

    stack.start_worker(GRADER_BURST_SLOTS="0", **gate.env)  # erin's, one at a time
    try:
        wait_for(lambda: "running" in statuses().values(), timeout=180, what="a grade")
        private_postgres.restart()  # while the first grade waits at its gate
        gate.open("erin")  # it ends now, on a database that restarted under it
        final = wait_for(
            lambda: (s := statuses()) and all(v in TERMINAL for v in s.values()) and s,
            timeout=240,
            what="every submission to finish",
        )
    finally:
        stack.stop_workers()
    assert sorted(final) == sorted(pks)
    assert [final[pk] for pk in pks] == ["passed", "passed", "passed", "failed"]
