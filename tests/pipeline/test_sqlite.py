"""A SQLite file named by DATABASE_URL takes a worker's and the web's writes at once.

The worker measures time budgets and saves verdicts while instructors create
assignments and set overrides through gunicorn; with SQLite's defaults (a
rollback journal, DEFERRED transactions, a 5 s wait) the web's writes failed
with "database is locked" (issue 28).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.pipeline.conftest import Stack, wait_for

pytestmark = pytest.mark.slow

RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
EXERCISES = 4
LEARNERS = 4
PER_LEARNER = 6
WEB_THREADS = 4

SETUP = f"""
import json
from django.contrib.auth.models import User
from grader.models import Exercise
from grader.services import submission_create
from quiz.core.api.tokens import token_issue
from quiz.core.roles import assign_role
from teaching.cohorts import cohort_create, cohort_join

RIGHT = {RIGHT!r}
ian = User.objects.create(username="ian")
assign_role(ian, "instructor")
cohort = cohort_create(owner=ian, name="Week 1")
exercises = [
    Exercise.objects.create(
        slug=f"count-{{i}}", title=f"Count {{i}}", harness="block-param-count",
        entry_point="block_param_count", signature="block_param_count(n_embd)",
        prompt="Count one block.", starter="def block_param_count(n_embd): ...",
        solution=RIGHT,
    )
    for i in range({EXERCISES})
]
for i in range({LEARNERS}):
    learner = User.objects.create(username=f"lea{{i}}")
    assign_role(learner, "learner")
    cohort_join(cohort=cohort, user=learner)
    for j in range({PER_LEARNER}):
        exercise = exercises[j % len(exercises)]
        submission_create(user=learner, exercise=exercise, code=RIGHT)
token = token_issue(user=ian, scopes=["teach"])[1]
print(json.dumps({{"token": token, "cohort": cohort.pk}}))
"""


def call(base: str, token: str, path: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Token {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def worker_done(db: Path) -> bool:
    """Every submission graded and every exercise's budget measured."""
    with sqlite3.connect(db, timeout=20) as conn:
        waiting = conn.execute(
            "SELECT count(*) FROM grader_submission"
            " WHERE status IN ('queued', 'running')"
        ).fetchone()[0]
        unmeasured = conn.execute(
            "SELECT count(*) FROM grader_exercise WHERE time_budget_seconds IS NULL"
        ).fetchone()[0]
    conn.close()
    return waiting == 0 and unmeasured == 0


def test_a_worker_and_the_web_write_one_sqlite_file_at_once(tmp_path):
    db = tmp_path / "db.sqlite3"
    stack = Stack(
        database_url=f"sqlite:///{db}",
        redis_url=os.environ["REDIS_URL"],
        SUBMISSION_RATE="10000/min",
    )
    try:
        stack.manage("migrate", "-v0")
        setup = json.loads(stack.python(SETUP).strip().splitlines()[-1])
        # No burst slots: every grade here is quick, so they would only be
        # forked at the start and never used.
        worker = stack.start_worker(slots=2, GRADER_BURST_SLOTS="0")
        base = stack.start_web()  # while the worker warms up
        token, cohort = setup["token"], setup["cohort"]
        now = datetime.now(UTC).replace(microsecond=0)
        results: list[tuple[str, int, str]] = []
        stop = threading.Event()

        def instructor(n: int) -> None:
            """Create assignments and set overrides until the worker is done."""
            rounds = 0
            while not stop.is_set() or rounds < 2:
                rounds += 1
                slug = f"count-{(n + rounds) % EXERCISES}"
                status, text = call(
                    base,
                    token,
                    f"/api/v1/cohorts/{cohort}/assignments/",
                    {
                        "title": f"A {n}.{rounds}",
                        "opens_at": (now - timedelta(days=1)).isoformat(),
                        "due_at": (now + timedelta(days=7)).isoformat(),
                        "items": [{"kind": "exercise", "slug": slug}],
                    },
                )
                results.append(("assignment", status, text))
                if status != 201:
                    continue
                created = json.loads(text)
                status, text = call(
                    base,
                    token,
                    f"/api/v1/assignments/{created['id']}/overrides/",
                    {
                        "learner": f"lea{n % LEARNERS}",
                        "item": created["items"][0]["id"],
                        "score": 0.5,
                        "reason": "regraded by hand",
                    },
                )
                results.append(("override", status, text))

        threads = [
            threading.Thread(target=instructor, args=(n,)) for n in range(WEB_THREADS)
        ]
        stack.wait_ready(worker)  # it grades and measures from now on
        for thread in threads:
            thread.start()
        try:
            wait_for(lambda: worker_done(db), timeout=180, what="the worker")
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=120)
        failed = [r for r in results if r[1] != 201]
        assert not failed, failed[:5]
        assert len(results) >= 2 * 2 * WEB_THREADS
        assert "grading pool ready" in Path(worker.log_path).read_text()
        for proc in stack.workers:  # the web server's and the worker's
            log = Path(proc.log_path).read_text()
            assert "database is locked" not in log, log[-3000:]
    finally:
        stack.stop_workers()
