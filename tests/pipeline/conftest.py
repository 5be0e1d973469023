"""Real Celery workers, a private Redis and a private PostgreSQL for fault tests.

Each fixture owns what it restarts or kills, so these tests can run beside the
rest of the suite (pytest-xdist) without disturbing the shared services.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

PYTHON = sys.executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, *, timeout: float, interval: float = 0.2, what: str = ""):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")


class RedisServer:
    """A throwaway redis-server that keeps nothing on disk, like the real one."""

    def __init__(self):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(self._pong, timeout=10, what="redis")

    def _pong(self) -> bool:
        import redis

        try:
            return redis.Redis(port=self.port, socket_timeout=0.5).ping()
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()


class PostgresServer:
    """A private PostgreSQL cluster (initdb as the postgres user) on its own port."""

    def __init__(self):
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="pg-"))
        shutil.chown(self.dir, "postgres", "postgres")
        self.bin = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1])
        self._as_postgres(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.dir / "data"),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ]
        )

    def _as_postgres(self, argv: list[str]) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *argv],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        self._as_postgres(
            [
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.dir / "data"),
                "-o",
                f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1",
                "-l",
                str(self.dir / "log"),
                "-w",
                "start",
            ]
        )

    def stop(self, mode: str = "immediate") -> None:
        self._as_postgres(
            [
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.dir / "data"),
                "-m",
                mode,
                "-w",
                "stop",
            ]
        )

    def restart(self) -> None:
        self.stop()
        self.start()

    def remove(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class Stack:
    """Environment for `manage.py` and Celery processes against given services."""

    def __init__(self, *, database_url: str, redis_url: str, **extra: str):
        self.queue = f"q-{uuid.uuid4().hex[:10]}"
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "CELERY_QUEUE": self.queue,
            "SECRET_KEY": "pipeline-test",
            "DEBUG": "0",
            "SWEEP_INTERVAL_SECONDS": "1",
            "SWEEP_QUEUED_AFTER_SECONDS": "3",
            "GRADING_LEASE_SECONDS": "30",
            "GRADER_TIMEOUT_SECONDS": "20",
            # These tests queue many submissions per learner before a worker runs.
            "SUBMISSION_MAX_OUTSTANDING": "1000",
            **extra,
        }
        self.workers: list[subprocess.Popen] = []

    def manage(self, *args: str, timeout: float = 300, **env: str) -> str:
        result = subprocess.run(
            [PYTHON, "manage.py", *args],
            cwd=PROJECT_ROOT,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def python(self, code: str, timeout: float = 120, **env: str) -> str:
        """Run `code` with Django set up, in this stack's environment plus `env`."""
        prelude = "import django; django.setup()\n"
        result = subprocess.run(
            [PYTHON, "-c", prelude + code],
            cwd=PROJECT_ROOT,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def submit(
        self, username: str, codes: list[str], *, create_user: bool
    ) -> list[str]:
        """Create submissions through the service in a process of this stack."""
        script = (
            "import json, os\n"
            "from django.contrib.auth.models import User\n"
            "from grader.models import Exercise\n"
            "from grader.services import submission_create\n"
            "args = json.loads(os.environ['SUBMIT_ARGS'])\n"
            "if args['create']:\n"
            "    User.objects.create_user(args['user'], password='x')\n"
            "user = User.objects.get(username=args['user'])\n"
            "exercise = Exercise.objects.get(slug='block-param-count')\n"
            "print(json.dumps([str(submission_create(user=user, exercise=exercise,"
            " code=c).pk) for c in args['codes']]))\n"
        )
        args = {"user": username, "codes": codes, "create": create_user}
        return json.loads(self.python(script, SUBMIT_ARGS=json.dumps(args)))

    def start_worker(
        self, *, slots: int = 1, beat: bool = False, **env: str
    ) -> subprocess.Popen:
        """One grading process with `slots` sandbox slots (one thread each)."""
        argv = [
            PYTHON,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--loglevel=INFO",
            "--hostname",
            f"{self.queue}-{len(self.workers)}@%h",
        ]
        if beat:
            argv += ["-B", "--schedule", tempfile.mktemp(prefix="beat-")]
        log = open(tempfile.mktemp(prefix="worker-", suffix=".log"), "w")  # noqa: SIM115
        proc = subprocess.Popen(
            argv,
            cwd=PROJECT_ROOT,
            env={**self.env, "GRADER_POOL_SIZE": str(slots), **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        proc.log_path = log.name
        self.workers.append(proc)
        return proc

    def start_web(self, *, workers: int = 2, threads: int = 4, **env: str) -> str:
        """A gunicorn web server on this stack, as deployed; returns its URL.

        Stopped with the workers (stop_workers).
        """
        port = free_port()
        log = open(tempfile.mktemp(prefix="web-", suffix=".log"), "w")  # noqa: SIM115
        proc = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--worker-class",
                "gthread",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
                "--timeout",
                "60",
            ],
            cwd=PROJECT_ROOT,
            env={**self.env, "SECURE_COOKIES": "0", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        proc.log_path = log.name
        self.workers.append(proc)
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert proc.poll() is None, Path(log.name).read_text()
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_for(up, timeout=60, what="the web server")
        return url

    def wait_ready(self, proc: subprocess.Popen, timeout: float = 180) -> None:
        """Until the worker's sandbox pool is warm (it says so in its log)."""
        wait_for(
            lambda: "grading pool ready" in Path(proc.log_path).read_text(),
            timeout=timeout,
            interval=0.5,
            what=f"worker {proc.pid} to warm up",
        )

    def stop_workers(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.workers:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.workers.clear()


@pytest.fixture
def private_redis():
    server = RedisServer()
    server.start()
    yield server
    server.stop()
    shutil.rmtree(server.dir, ignore_errors=True)


@pytest.fixture
def private_postgres():
    server = PostgresServer()
    server.start()
    yield server
    server.remove()
