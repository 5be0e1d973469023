"""Settings come from the environment, with safe defaults and clear refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import PROJECT_ROOT

PROBE = """
import json, django
from django.conf import settings
django.setup()
db = settings.DATABASES["default"]
print(json.dumps({
    "engine": db["ENGINE"], "name": str(db["NAME"]), "debug": settings.DEBUG,
    "options": db.get("OPTIONS", {}),
    "broker": settings.CELERY_BROKER_URL, "accept": settings.CELERY_ACCEPT_CONTENT,
    "serializer": settings.CELERY_TASK_SERIALIZER,
    "acks_late": settings.CELERY_TASK_ACKS_LATE,
    "time_limit": settings.CELERY_TASK_TIME_LIMIT,
    "soft_time_limit": settings.CELERY_TASK_SOFT_TIME_LIMIT,
    "secure_cookies": settings.SESSION_COOKIE_SECURE,
    "grader_timeout": settings.GRADER_TIMEOUT_SECONDS,
    "lease": settings.GRADING_LEASE_SECONDS,
    "hasher": settings.PASSWORD_HASHERS[0],
}))
"""


def settings_with(env: dict) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    base["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**base, **env},
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def read(env: dict) -> dict:
    result = settings_with(env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_defaults_are_sqlite_no_debug_and_local_redis():
    values = read({"SECRET_KEY": "k"})
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["name"].endswith("db.sqlite3")
    assert values["debug"] is False
    assert values["broker"] == "redis://127.0.0.1:6379/0"
    assert values["secure_cookies"] is True
    # The suite hashes with MD5 for speed (tests/conftest.py); production not.
    assert values["hasher"] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"


def test_database_url_selects_postgresql():
    values = read(
        {"SECRET_KEY": "k", "DATABASE_URL": "postgres://u@127.0.0.1:5432/course"}
    )
    assert values["engine"] == "django.db.backends.postgresql"
    assert values["name"] == "course"


def test_a_sqlite_database_url_gets_wal_immediate_writes_and_a_wait(tmp_path):
    """Issue 28: these were given only to the default file, not to a URL's."""
    values = read({"SECRET_KEY": "k", "DATABASE_URL": f"sqlite:///{tmp_path}/x.db"})
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["name"] == f"{tmp_path}/x.db"
    assert values["options"]["transaction_mode"] == "IMMEDIATE"
    assert values["options"]["timeout"] >= 20
    assert "journal_mode=WAL" in values["options"]["init_command"]
    default = read({"SECRET_KEY": "k"})
    assert default["options"] == values["options"]


def test_a_grade_outlives_no_lease_even_when_it_waits_to_its_backstop():
    """A budget is CPU time; code that waits runs to the wall-clock backstop
    (3x the budget), which moves on while a busy machine keeps the job from
    a core, up to twice as far (wall_limit). A lease shorter than that would
    hand a live grade to another worker (graded twice): it covers the
    largest budget's limit."""
    from grading_engine.sandbox.job_clock import wall_backstop, wall_limit

    for timeout in ("60", "7"):
        values = read({"SECRET_KEY": "k", "GRADER_TIMEOUT_SECONDS": timeout})
        assert values["grader_timeout"] == int(timeout)
        assert wall_limit(int(timeout)) >= wall_backstop(int(timeout))
        assert values["lease"] >= wall_limit(int(timeout)) + 30
    assert read({"SECRET_KEY": "k", "GRADING_LEASE_SECONDS": "30"})["lease"] == 30


def test_redis_url_is_the_celery_broker():
    values = read({"SECRET_KEY": "k", "REDIS_URL": "redis://10.0.0.9:6380/2"})
    assert values["broker"] == "redis://10.0.0.9:6380/2"


def test_celery_accepts_json_only_with_late_acks_and_time_limits():
    values = read({"SECRET_KEY": "k"})
    assert values["accept"] == ["json"] and values["serializer"] == "json"
    assert values["acks_late"] is True
    assert 0 < values["soft_time_limit"] < values["time_limit"]


def test_a_secret_key_is_required_when_debug_is_off():
    result = settings_with({})
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_debug_runs_without_a_secret_key():
    assert read({"DEBUG": "1"})["debug"] is True


def test_a_malformed_boolean_is_rejected_by_name():
    result = settings_with({"DEBUG": "maybe", "SECRET_KEY": "k"})
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_a_malformed_integer_is_rejected_by_name():
    result = settings_with({"SECRET_KEY": "k", "CELERY_TASK_TIME_LIMIT": "soon"})
    assert "CELERY_TASK_TIME_LIMIT='soon' is not an integer" in result.stderr
