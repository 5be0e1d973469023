"""The services a benchmark grades through: gunicorn, Celery workers, its own DB.

Shared by pipeline_bench and surge_bench. Each run gets a queue of its own
(CELERY_QUEUE), so benchmarks never consume each other's or the tests' tasks.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from private_services import celery_worker_argv

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
TERMINAL = {"passed", "failed", "error", "cancelled"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> str:
    """`manage.py ARGS` with `env`; its output (it must succeed)."""
    return subprocess.run(
        [PY, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


class Bench:
    def __init__(self, database_url: str, redis_url: str):
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": f"bench-{uuid.uuid4().hex[:8]}",
            "SECRET_KEY": os.environ.get("SECRET_KEY", "benchmark-only"),
            "DEBUG": "0",
            "SECURE_COOKIES": "0",
            "SUBMISSION_RATE": "100000/min",
            "SUBMISSION_MAX_OUTSTANDING": "100000",
        }
        self.procs: list[subprocess.Popen] = []
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.token = ""

    def manage(self, *args: str) -> str:
        return manage(self.env, *args)

    def spawn(self, argv: list[str], **env: str) -> subprocess.Popen:
        log = tempfile.NamedTemporaryFile(
            "w", prefix="bench-", suffix=".log", delete=False
        )
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env={**self.env, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def start_web(self, threads: int = 4) -> None:
        self.spawn(
            [
                PY,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "2",
                "--worker-class",
                "gthread",
                "--threads",
                str(threads),
            ]
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=10)
                return
            except OSError:  # refused, reset or timed out while booting
                time.sleep(0.2)
        raise SystemExit("gunicorn did not start")

    def start_worker(self, name: str, slots: int = 1, **env: str) -> subprocess.Popen:
        """One grading process with `slots` sandbox slots (one thread each)."""
        return self.spawn(
            celery_worker_argv(PY, f"{name}@%h", loglevel="WARNING"),
            **{"GRADER_POOL_SIZE": str(slots), **env},
        )

    def wait_until_measured(
        self, slugs: list[str] | None = None, timeout: float = 300
    ) -> float:
        """Wait until the workers measured the time budget of every exercise,
        or of `slugs` (an exercise whose options set a budget is not
        measured: needs_measuring)."""
        import psycopg

        start = time.monotonic()
        query = (
            "SELECT count(*) FROM grader_exercise "
            "WHERE published AND time_budget_seconds IS NULL "
            "AND NOT (COALESCE(options, '{}'::jsonb) ? 'time_budget_seconds')"
            + ("" if slugs is None else " AND slug = ANY(%s)")
        )
        params = [] if slugs is None else [list(slugs)]
        with psycopg.connect(self.env["DATABASE_URL"], autocommit=True) as conn:
            while conn.execute(query, params).fetchone()[0]:
                if time.monotonic() - start > timeout:
                    raise SystemExit("the workers did not measure the exercises")
                time.sleep(0.5)
        return time.monotonic() - start

    def call(self, method: str, path: str, body=None) -> dict:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Token {self.token}"} if self.token else {}),
            },
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    def submit_and_wait(self, slug: str, code: str, poll: float = 0.005) -> float:
        start = time.perf_counter()
        created = self.call(
            "POST", f"/api/v1/exercises/{slug}/submissions/", {"code": code}
        )
        while True:
            status = self.call("GET", f"/api/v1/submissions/{created['id']}/")["status"]
            if status in TERMINAL:
                if status != "passed":
                    raise SystemExit(f"benchmark grade ended {status}")
                return time.perf_counter() - start
            time.sleep(poll)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def pct(values: list[float], q: float) -> float:
    """The q-quantile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
