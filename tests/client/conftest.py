"""A real course server for the learner client: gunicorn and a Celery worker.

One per test session (the client tests share an xdist group), on a database
of its own with the course content loaded, so the `course` command, the
notebook magics and the parity test talk HTTP to what a learner would.

What it costs is start-up, so it starts each thing once and in parallel:
one Django process (DjangoShell) migrates, loads the content and then runs
every test's set-up code (users, expired tokens), where a `manage.py` or
`python -c` per step would set Django (and torch) up again each time; the
web server starts while the worker warms its sandbox pool; the content is
loaded without the lessons' figures (no test here reads a lesson page; the
full load with figures is tested in tests/quiz and tests/pipeline) and once
the worker is up, so its start-up measures no budget: the first grade of an
exercise measures its own, as after a content load on a running site.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
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


# Reads one line of Python source (JSON-encoded) at a time, runs it with
# Django set up, answers one JSON line: what it printed, and whether it raised.
_SHELL = r"""
import contextlib, io, json, sys, traceback
import django
django.setup()
answer = sys.stdout
for line in sys.stdin:
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(json.loads(line), "<course_server>", "exec"), {})
        reply = {"ok": True, "out": printed.getvalue()}
    except BaseException:
        reply = {"ok": False, "out": printed.getvalue() + traceback.format_exc()}
    answer.write(json.dumps(reply) + "\n")
    answer.flush()
"""


class DjangoShell:
    """One long-lived Django process on a stack's database, running code sent
    to it: set-up code then costs milliseconds, not a Django (and torch)
    import per call."""

    def __init__(self, stack: Stack):
        self.log = tempfile.mktemp(prefix="django-shell-", suffix=".log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _SHELL],
                cwd=PROJECT_ROOT,
                env=stack.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
        self.replies: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.replies.put(json.loads(line))
        self.replies.put(None)  # it exited

    def run(self, code: str, timeout: float = 300) -> str:
        """Run `code`; what it printed, or a failed assertion with its traceback."""
        with self.lock:
            self.proc.stdin.write(json.dumps(code) + "\n")
            self.proc.stdin.flush()
            try:
                reply = self.replies.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no answer in {timeout} s to:\n{code}") from None
        assert reply is not None, Path(self.log).read_text()
        assert reply["ok"], reply["out"]
        return reply["out"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class CourseServer:
    url: str
    stack: Stack
    shell: DjangoShell

    def python(self, code: str) -> str:
        """Run `code` with Django set up on this server's database."""
        return self.shell.run(code)

    def user(self, username: str) -> str:
        """A fresh learner with PASSWORD; returns the username."""
        self.python(
            "from django.contrib.auth.models import User\n"
            f"User.objects.create_user({username!r}, password={PASSWORD!r})\n"
        )
        return username

    def gunicorn(self, *, workers: int = 2, **env: str) -> str:
        """Another web process on this database (e.g. with other limits)."""
        return self.gunicorn_up(self.gunicorn_start(workers=workers, **env))

    def gunicorn_start(self, *, workers: int = 2, **env: str):
        """Start a web process; gunicorn_up() waits for it."""
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
                str(workers),
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
        return proc, f"http://127.0.0.1:{port}", log

    def gunicorn_up(self, started) -> str:
        proc, url, log = started

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
def client_dist(tmp_path_factory) -> Path:
    """What `make client` builds, once per session: the learner edition's and
    the client's wheels (offline, from this checkout) and every exercise's
    local-check bundle, with their manifest (about 10 s)."""
    from grading_engine.learner_edition import build

    out = tmp_path_factory.mktemp("client-dist")
    build(out, client=PROJECT_ROOT / "client")
    return out


@pytest.fixture(scope="session")
def learner_install(client_dist, tmp_path_factory) -> Path:
    """The served wheels installed as a learner's pip would (no dependencies:
    torch and the rest come from this venv), into a directory of their own.
    On PYTHONPATH it shadows the checkout's editable engine and client, so a
    process there runs exactly what a learner runs."""
    target = tmp_path_factory.mktemp("learner-site")
    wheels = sorted(str(p) for p in client_dist.glob("*.whl"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            "--target",
            str(target),
            *wheels,
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # This venv installs the checkout's engine and client editable, through
    # import hooks that would fill in any module the wheels lack. A learner
    # has no such hooks: take them out in every process started with this
    # directory on PYTHONPATH (site imports the first sitecustomize on it).
    (target / "sitecustomize.py").write_text(_NO_EDITABLE_HOOKS, encoding="utf-8")
    return target


_NO_EDITABLE_HOOKS = """\
# Test-only (tests/client/conftest.py): a learner's interpreter, without the
# checkout's editable installs, so only the installed wheels can be imported.
import sys

sys.meta_path[:] = [
    finder
    for finder in sys.meta_path
    if not getattr(finder, "__module__", "").startswith("__editable__")
]
"""


@pytest.fixture(scope="session")
def course_server(client_dist):
    name = f"client_{uuid.uuid4().hex[:10]}"
    _database(name)
    stack = Stack(
        database_url=f"postgres://postgres@127.0.0.1:5432/{name}",
        redis_url=os.environ["REDIS_URL"],
        ALLOWED_HOSTS="127.0.0.1,localhost",
        SECURE_COOKIES="0",
        SUBMISSION_RATE="10000/min",
        GRADER_TIMEOUT_SECONDS="60",
        CLIENT_DIST_DIR=str(client_dist),
    )
    shell = DjangoShell(stack)
    try:
        shell.run(
            "from django.core.management import call_command\n"
            "call_command('migrate', verbosity=0)\n"
        )
        worker = stack.start_worker(slots=2)
        server = CourseServer(url="", stack=stack, shell=shell)
        web = server.gunicorn_start()  # starts while the worker warms up
        stack.wait_ready(worker)
        shell.run(
            "from django.core.management import call_command\n"
            "call_command('load_content', '--no-figures', verbosity=0)\n"
        )
        server.url = server.gunicorn_up(web)
        yield server
    finally:
        shell.close()
        stack.stop_workers()  # the web processes too (CourseServer.gunicorn)
        _database(name, drop=True)


@pytest.fixture
def course_home(tmp_path, monkeypatch, learner_install):
    """A learner's machine: its own config directory and working directory,
    and the client and engine the server serves (`course` and the local
    checks' fork server import them, not the checkout's)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("COURSE_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("PYTHONPATH", str(learner_install))
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
