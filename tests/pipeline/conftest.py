"""Real Celery workers, a private Redis and a private PostgreSQL for fault tests.

Each fixture owns what it restarts or kills, so these tests can run beside the
rest of the suite (pytest-xdist) without disturbing the shared services.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from pathlib import Path

import pytest

from benchmarks.private_services import (  # noqa: F401 - fixtures' helpers
    PostgresServer,
    RedisServer,
    celery_worker_argv,
    free_port,
    wait_for,
)
from tests.conftest import PROJECT_ROOT

PYTHON = sys.executable


def exercise_tree(root: Path, *slugs: str) -> Path:
    """A content tree at `root` holding only the exercise files `slugs`.

    Copies of content/exercises/<slug>.yaml, loaded by the real loader
    (`content_load(root=...)` or `manage.py load_content ROOT`) like the whole
    tree, but without its lessons: these tests grade exercises, and the whole
    tree would render every figure and leave every exercise unmeasured, which
    each worker then measures at its start (three reference runs apiece,
    competing with the grades under test). An exercise's `lesson:` line is
    dropped because its lesson is not in this tree.
    """
    folder = root / "exercises"
    folder.mkdir(parents=True, exist_ok=True)
    for slug in slugs:
        text = (PROJECT_ROOT / "content" / "exercises" / f"{slug}.yaml").read_text()
        (folder / f"{slug}.yaml").write_text(re.sub(r"(?m)^lesson:.*\n", "", text))
    return root


def load_exercises(*slugs: str) -> None:
    """Load only these exercises into this test's database (see exercise_tree)."""
    from quiz.content.loader import content_load

    with tempfile.TemporaryDirectory(prefix="exercises-") as root:
        content_load(root=exercise_tree(Path(root), *slugs))


class Gate:
    """Files a test creates to let waiting submissions go on (gated_code).

    A job in the sandbox sees nothing of the host but a few read-only
    folders; one of them is TIKTOKEN_CACHE_DIR, bound at the path the job's
    own TIKTOKEN_CACHE_DIR names (the worker installs tiktoken's files there
    when its pool starts). Workers started with `env` use this folder, so a
    file the test creates here shows up inside a running job: a grade can
    wait exactly until the test lets it go (never a sleep that must outlast
    whatever the test does meanwhile).
    """

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="gate-"))
        self.dir.chmod(0o755)  # the slots' uids read it

    @property
    def env(self) -> dict[str, str]:
        return {"TIKTOKEN_CACHE_DIR": str(self.dir)}

    def open(self, name: str) -> None:
        (self.dir / name).touch()

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def gated_code(name: str) -> str:
    """A right block-param-count answer whose first call waits for Gate.open(name).

    It sleeps while it waits, so its CPU-time budget never runs out; the
    wall-clock backstop (three times the budget) does, so the test opens the
    gate (or kills the worker) well within it.
    """
    return (
        "import os\nimport time\n_waited = []\n"
        "def block_param_count(n_embd):\n"
        "    if not _waited:\n"
        f"        gate = os.path.join(os.environ['TIKTOKEN_CACHE_DIR'], {name!r})\n"
        "        while not os.path.exists(gate):\n"
        "            time.sleep(0.05)\n"
        "        _waited.append(1)\n"
        "    return 12 * n_embd**2 + 13 * n_embd\n"
    )


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
            # An exercise is measured by its first grade, not by every worker
            # at its start: a test loads the whole course and grades one or
            # two of its sixty exercises (test_pipeline proves the start's
            # measuring with it on).
            "GRADER_MEASURE_ON_START": "0",
            # Workers of this host share it with other tests' workers (the
            # warm ones, on the same database): none takes back what a test
            # killed unless that test asks (test_pipeline's sibling test).
            "GRADER_PEER_CHECK_SECONDS": "0",
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
        self, username: str, codes: list[str], *, create_user: bool, first: str = ""
    ) -> list[str]:
        """Create submissions through the service in a process of this stack
        (after running the code `first`, if given, in that process)."""
        script = first + (
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
        argv = celery_worker_argv(PYTHON, f"{self.queue}-{len(self.workers)}@%h")
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

    def start_web(
        self, *, workers: int = 2, threads: int = 4, asgi: bool = False, **env: str
    ) -> str:
        """A gunicorn web server on this stack; returns its URL.

        `asgi`: uvicorn workers on config.asgi, as deployed; otherwise the
        threaded WSGI server (the SQLite test). Stopped with the workers.
        """
        port = free_port()
        log = open(tempfile.mktemp(prefix="web-", suffix=".log"), "w")  # noqa: SIM115
        if asgi:
            kind = ["--config", "deploy/gunicorn.conf.py", "config.asgi"]
        else:
            kind = [
                "config.wsgi",
                "--worker-class",
                "gthread",
                "--threads",
                str(threads),
            ]
        proc = subprocess.Popen(
            [
                PYTHON,
                "-m",
                "gunicorn",
                *kind,
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
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
            what=f"worker {proc.pid} to warm up",
        )

    def stop_workers(self, procs: list[subprocess.Popen] | None = None) -> None:
        """Stop `procs` (default: every process this stack started)."""
        procs = list(self.workers if procs is None else procs)
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            self.workers.remove(proc)


class WarmWorkers:
    """Grading workers kept warm across the tests that never kill or restart
    one (the `warm` fixture, tests/conftest.py), on the session's test
    database.

    A worker takes many seconds to start (torch, the reference models, a
    sandbox probe, the slots): tests that only need one to grade share it.
    One worker per number of slots (no burst slots), each on a queue of its
    own; a test takes one (WarmShare.ready), sends its wake-ups to its
    queue, and leaves it idle: a test that ends with work still queued or
    running, or with its worker dead, has it replaced for the next test.
    """

    def __init__(self, database_url: str):
        self.database_url = database_url
        self.stacks: dict[int, Stack] = {}

    def ready(self, slots: int) -> Stack:
        stack = self.stacks.get(slots)
        if stack is not None and any(p.poll() is not None for p in stack.workers):
            self.discard(slots)
            stack = None
        if stack is None:
            stack = Stack(
                database_url=self.database_url, redis_url=os.environ["REDIS_URL"]
            )
            stack.metrics_port = free_port()  # the worker's /metrics (a test reads it)
            stack.start_worker(
                slots=slots,
                GRADER_BURST_SLOTS="0",
                GRADER_METRICS_PORT=str(stack.metrics_port),
            )
            self.stacks[slots] = stack
        stack.wait_ready(stack.workers[0])
        return stack

    def discard(self, slots: int) -> None:
        stack = self.stacks.pop(slots, None)
        if stack is not None:
            stack.stop_workers()

    def stop(self) -> None:
        for slots in list(self.stacks):
            self.discard(slots)


class WarmShare:
    """One test's use of the warm workers (the `warm` fixture)."""

    def __init__(self, workers: WarmWorkers, settings):
        self.workers = workers
        self.settings = settings
        self.slots: int | None = None
        self.extra: list[subprocess.Popen] = []

    def ready(self, *, slots: int) -> subprocess.Popen:
        """The warm worker with `slots` slots, ready; wake-ups go to its queue."""
        assert self.slots in (None, slots), "one worker shape per test"
        self.slots = slots
        stack = self.workers.ready(slots)
        self.settings.CELERY_TASK_DEFAULT_QUEUE = stack.queue
        return stack.workers[0]

    def another(self) -> subprocess.Popen:
        """A second worker host on the same queue, ready; stopped after the test."""
        stack = self.workers.ready(self.slots)
        proc = stack.start_worker(slots=self.slots, GRADER_BURST_SLOTS="0")
        self.extra.append(proc)
        stack.wait_ready(proc)
        return proc

    def finish(self) -> None:
        """Leave the worker idle with nothing to wake it, or replace it.

        Workers claim from the database, not from their messages: a wake-up
        left in its queue would let an idle warm worker claim the rows of a
        later test that runs workers of its own on this database.
        """
        from config.celery import app
        from grader.models import RegradeResult, Submission

        if self.slots is None:
            return
        stack = self.workers.stacks.get(self.slots)
        if stack is None:
            return
        # A stopped worker puts the wake-ups it had taken back in the queue.
        stack.stop_workers(self.extra)
        busy = (
            Submission.objects.filter(status__in=("queued", "running")).exists()
            or RegradeResult.objects.filter(status__in=("pending", "running")).exists()
        )
        if busy:  # a failed test: the next one gets an idle worker
            self.workers.discard(self.slots)
            return
        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(stack.queue)


@pytest.fixture
def gate():
    opened = Gate()
    yield opened
    opened.remove()


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
