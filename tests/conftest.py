"""Fixtures shared by the whole suite: users in each role, content trees."""

from __future__ import annotations

import contextlib
import os
import shutil
import textwrap
import uuid
from pathlib import Path

import pytest
import yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# The LMS simulator's fixtures, for tests/lms and the browser journeys.
pytest_plugins = ["tests.lms.fixtures"]


def pytest_addoption(parser):
    parser.addoption(
        "--exhaustive",
        action="store_true",
        help="also run the brute-force tier (tests marked exhaustive): what "
        "`make test` proves structurally, proved again case by case "
        "(`make test-exhaustive`, docs/testing.md)",
    )


def pytest_collection_modifyitems(config, items):
    """Leave the exhaustive tier out unless --exhaustive asks for it."""
    if config.getoption("--exhaustive"):
        return
    kept, left_out = [], []
    for item in items:
        (left_out if item.get_closest_marker("exhaustive") else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def _private_cache_namespace(request):
    """Give this test process its own cache keys (throttle counters live there).

    pytest-xdist workers share one Redis database but not one SQL database,
    so user ids repeat across workers and their throttles would collide.
    """
    from django.conf import settings
    from django.test import override_settings

    if not settings.configured:  # a plain-Python run (-p no:django)
        yield
        return
    # pytest-xdist's worker_id fixture is missing under -p no:xdist.
    worker_id = getattr(request.config, "workerinput", {}).get("workerid", "main")
    caches = {
        name: {**config, "KEY_PREFIX": f"test-{worker_id}-{uuid.uuid4().hex[:8]}"}
        for name, config in settings.CACHES.items()
    }
    with override_settings(CACHES=caches):
        yield


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashes():
    """Hash the suite's passwords with MD5 instead of PBKDF2.

    PBKDF2 is slow on purpose (0.2 to 1 s a hash here), and the suite makes
    and logs in thousands of users. What is tested is who may do what, not
    the hash; production keeps Django's default hashers
    (tests/test_settings.py). A server process a test starts hashes with
    the production settings, so users it checks are made in that process.
    """
    from django.conf import settings
    from django.test import override_settings

    if not settings.configured:
        yield
        return
    with override_settings(
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]
    ):
        yield


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete():
    """Empty the tables after a transactional test with DELETE, not TRUNCATE.

    Django empties every table after each test that commits (the pipeline,
    LMS, browser and command tests). PostgreSQL's TRUNCATE of the 54 tables
    gives each table and index a new file: 0.37 s here, against 0.03 s for a
    DELETE of every table's few test rows, after each of a hundred-odd tests.
    The result is the same, empty tables: every foreign key is deferred to
    the flush's commit (test_every_foreign_key_is_deferrable), so the order
    of the DELETEs does not matter.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or not tables:
            return truncate(
                self,
                style,
                tables,
                reset_sequences=reset_sequences,
                allow_cascade=allow_cascade,
            )
        return [f"DELETE FROM {self.quote_name(table)};" for table in tables]

    DatabaseOperations.sql_flush = sql_flush
    try:
        yield
    finally:
        DatabaseOperations.sql_flush = truncate


@pytest.fixture(scope="session", autouse=True)
def _static_files_from_the_source():
    """Serve static files under their plain names from the source folders.

    A `collectstatic` left in this checkout (the surge benchmark runs one)
    would otherwise give pages hashed names the test server's static handler
    cannot find. tests/test_static_files.py checks the production storage.
    """
    from django.conf import settings
    from django.test import override_settings

    if not settings.configured:
        yield
        return
    plain = "django.contrib.staticfiles.storage.StaticFilesStorage"
    storages = {**settings.STORAGES, "staticfiles": {"BACKEND": plain}}
    with override_settings(STORAGES=storages):
        yield


@pytest.fixture(autouse=True)
def _torch_state_unchanged(request):
    """Fail the test (or lesson doctest) that leaves process-wide torch state
    changed: threads, default dtype and device, deterministic flags, grad
    mode, print options, the global generator's seed (and, for tests marked
    strict_torch_state such as the lesson doctests, any draw from it).
    Restored afterwards, so one leak is reported once instead of skewing every
    later test."""
    import torch

    from tests.torch_state import describe_leak, restore_torch_state, torch_state

    strict = request.node.get_closest_marker("strict_torch_state") is not None
    before = torch_state(strict_rng=strict)
    rng = torch.random.get_rng_state()
    yield
    leak = describe_leak(before, torch_state(strict_rng=strict))
    if leak:
        restore_torch_state(before, rng)
        pytest.fail(f"the test changed process-wide torch state: {leak}")


@pytest.fixture
def make_user(db, django_user_model):
    from quiz.core.roles import assign_role

    def make(
        username: str, role: str | None = "learner", password: str = "pw-Secret-123"
    ):
        user = django_user_model.objects.create_user(
            username=username, password=password
        )
        if role:
            assign_role(user, role)
        if role == "admin":
            user.is_superuser = True
            user.save()
        return user

    return make


@pytest.fixture
def block_exercise(db):
    """A published block-param-count exercise row, for API and page tests."""
    from grader.models import Exercise

    return Exercise.objects.create(
        slug="block-param-count",
        title="Count one block",
        harness="block-param-count",
        entry_point="block_param_count",
        signature="block_param_count(n_embd) -> int",
        prompt="Count the **parameters** of one block.",
        starter="def block_param_count(n_embd):\n    ...\n",
        solution=(
            "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
        ),
        wrong_solutions=[{"name": "no biases", "code": "secret wrong code"}],
    )


@pytest.fixture
def learner(make_user):
    return make_user("lea", "learner")


@pytest.fixture
def instructor(make_user):
    return make_user("ian", "instructor")


@pytest.fixture
def admin_user(make_user):
    return make_user("ada", "admin")


SECTION = """\
---
slug: {slug}
order: {order}
title: {title}
---
About {title}.
"""


def lesson_front_matter(section: str, order: int, slug: str) -> dict:
    return {
        "section": section,
        "order": order,
        "slug": slug,
        "title": slug.replace("-", " ").title(),
        "question": f"What is {slug}?",
        "tags": ["demo"],
        "reading_time": 3,
        "takeaway": f"Remember {slug}.",
        "follow_ups": [{"question": "Why?", "answer": "Because."}],
        "questions": [
            {
                "kind": "choice",
                "prompt": "Pick one.",
                "choices": ["a", "b"],
                "answer": 1,
                "explanation": "b is right.",
            },
            {
                "kind": "numeric",
                "prompt": "How many parameters per block?",
                "answer": 7087872,
                "tolerance": 0,
                "explanation": "12d^2 + 13d.",
            },
            {"kind": "recall", "prompt": "Explain tying.", "answer": "One matrix."},
        ],
    }


class ContentTreeBuilder:
    """Writes a small content/ tree in a temp folder for loader tests."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def section(self, slug: str, order: int, title: str | None = None) -> Path:
        folder = self.root / f"{order:02d}-{slug}"
        folder.mkdir(exist_ok=True)
        path = folder / "_section.md"
        path.write_text(SECTION.format(slug=slug, order=order, title=title or slug))
        return path

    def lesson(
        self, in_section: str, order: int, slug: str, body: str | None = None, **fields
    ) -> Path:
        """Write a valid lesson; `fields` override front matter (None drops a key)."""
        folder = next(self.root.glob(f"*-{in_section}"), None) or self.root / "99-misc"
        folder.mkdir(exist_ok=True)
        meta = lesson_front_matter(in_section, order, slug)
        for name, value in fields.items():
            if value is None:
                meta.pop(name, None)
            else:
                meta[name] = value
        text = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n"
        text += body if body is not None else f"## What you need to know\n{slug}.\n"
        path = folder / f"{order:02d}-{slug}.md"
        path.write_text(text)
        return path

    def raw(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path


@pytest.fixture
def content_tree(tmp_path) -> ContentTreeBuilder:
    tree = ContentTreeBuilder(tmp_path / "content")
    tree.section("basics", 1, "Basics")
    tree.section("advanced", 2, "Advanced")
    tree.lesson("basics", 1, "first-lesson")
    tree.lesson("basics", 2, "second-lesson")
    tree.lesson("advanced", 1, "third-lesson")
    return tree


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@contextlib.contextmanager
def launched_chromium():
    """Debian's Chromium driven by Playwright (never a downloaded browser)."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed (make test installs it)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the Django ORM
    # calls the test makes are still synchronous and safe here.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM,
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                ],
            )
            yield browser
            browser.close()
            _close_connections_of_this_context()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture
def browser():
    with launched_chromium() as chromium:
        yield chromium


def _close_connections_of_this_context() -> None:
    """Close the database connections the test's ORM calls opened while
    Playwright's loop was running.

    Django keeps one connection per async context, and a running event loop
    makes the test body such a context: its connection is not the test's own,
    nothing closes it, and it kept the test database open at the end of the
    session ("database ... is being accessed by other users").
    """
    from django.conf import settings

    if settings.configured:
        from django.db import connections

        for connection in connections.all(initialized_only=True):
            if not connection.in_atomic_block:  # never a test's open transaction
                connection.close()


@pytest.fixture
def db_stack(transactional_db, settings):
    """Real workers on this test's own database, with a queue of their own.

    This process sends its wake-ups to that queue too; the workers a test
    starts (`db_stack.start_worker()`) are stopped at its end.
    """
    from django.db import connection

    from tests.pipeline.conftest import Stack

    name = connection.settings_dict["NAME"]
    stack = Stack(
        database_url=f"postgres://postgres@127.0.0.1:5432/{name}",
        redis_url=os.environ["REDIS_URL"],
    )
    settings.CELERY_TASK_DEFAULT_QUEUE = stack.queue
    yield stack
    stack.stop_workers()


@pytest.fixture(scope="session")
def _warm_workers(django_db_setup):
    from django.db import connection

    from tests.pipeline.conftest import WarmWorkers

    name = connection.settings_dict["NAME"]  # the session's test database
    workers = WarmWorkers(f"postgres://postgres@127.0.0.1:5432/{name}")
    yield workers
    workers.stop()


@pytest.fixture
def warm(transactional_db, settings, _warm_workers):
    """A warm grading worker for a test that never kills or restarts it
    (WarmShare): a worker takes 10 to 15 s of CPU time to start, so the
    pipeline and browser tests of one xdist process share one per shape."""
    from tests.pipeline.conftest import WarmShare

    share = WarmShare(_warm_workers, settings)
    yield share
    share.finish()


def sign_in(page, base: str, username: str, password: str = "pw-Secret-123"):
    """Log in through the real form, as a person would."""
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("main button[type=submit]")
    page.wait_for_url(base + "/")
