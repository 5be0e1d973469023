"""A real course server for the learner client: gunicorn and a Celery worker.

One per test session (the client tests share an xdist group), on a database
of its own with the course content loaded, so the `course` command, the
notebook magics and the parity test talk HTTP to what a learner would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import requests

from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import Stack, free_port, wait_for

COURSE = str(Path(sys.executable).with_name("course"))
PASSWORD = "client-Secret-123"
ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


@dataclass
class CourseServer:
    url: str
    stack: Stack

    def user(self, username: str) -> str:
        """A fresh learner with PASSWORD; returns the username."""
        self.stack.python(
            "from django.contrib.auth.models import User\n"
            f"User.objects.create_user({username!r}, password={PASSWORD!r})\n"
        )
        return username

    def gunicorn(self, **env: str) -> str:
        """Another web process on this database (e.g. with other limits)."""
        port = free_port()
        log = open(tempfile.mktemp(prefix="gunicorn-", suffix=".log"), "w")  # noqa: SIM115
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--timeout",
                "60",
            ],
            cwd=PROJECT_ROOT,
            env={**self.stack.env, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.stack.workers.append(proc)  # stopped with the workers
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            assert proc.poll() is None, Path(log.name).read_text()
            try:
                return requests.get(url + "/healthz", timeout=2).status_code == 200
            except requests.RequestException:
                return False

        wait_for(up, timeout=60, what="gunicorn")
        return url


def _database(name: str, *, drop: bool = False) -> None:
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        if drop:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            conn.execute(f'CREATE DATABASE "{name}"')


@pytest.fixture(scope="session")
def course_server():
    name = f"client_{uuid.uuid4().hex[:10]}"
    _database(name)
    stack = Stack(
        database_url=f"postgres://postgres@127.0.0.1:5432/{name}",
        redis_url=os.environ["REDIS_URL"],
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_COOKIES="0",
        SUBMISSION_RATE="10000/min",
        GRADER_TIMEOUT_SECONDS="60",
    )
    try:
        stack.manage("migrate", "-v0")
        # One torch thread for the figures: on a busy 2-core machine two
        # spinning OpenMP threads per process slowed this step tenfold.
        stack.manage("load_content", timeout=900, OMP_NUM_THREADS="1")
        worker = stack.start_worker(slots=2)
        server = CourseServer(url="", stack=stack)
        server.url = server.gunicorn()
        stack.wait_ready(worker)
        yield server
    finally:
        stack.stop_workers()  # the web processes too (CourseServer.gunicorn)
        _database(name, drop=True)


@pytest.fixture
def course_home(tmp_path, monkeypatch):
    """A learner's machine: its own config directory and working directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("COURSE_CONFIG_DIR", str(home / "config"))
    monkeypatch.chdir(home)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def course(home: Path, *args: str, stdin: str = "", timeout: float = 300):
    """Run the installed `course` command as a learner would, in `home`."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO", "DATABASE", "CELERY", "PYTEST"))
    }
    env.update(HOME=str(home), COURSE_CONFIG_DIR=str(home / "config"))
    return subprocess.run(
        [COURSE, *args],
        cwd=home,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def course_login(home: Path, url: str, username: str, password: str = PASSWORD):
    """`course login URL` with the password on stdin, as a script would run it."""
    return course(
        home,
        "login",
        url,
        "--username",
        username,
        "--password-stdin",
        stdin=password + "\n",
    )
