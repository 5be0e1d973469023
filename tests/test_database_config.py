"""config.database: DATABASE_URL to DATABASES, SQLite shared safely (issue 28)."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.database import SQLITE_OPTIONS, database_config

BASE = Path("/srv/course")


def assert_shared_sqlite(config: dict) -> None:
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["OPTIONS"]["timeout"] == 20
    assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    init = config["OPTIONS"]["init_command"]
    assert "PRAGMA journal_mode=WAL" in init and "PRAGMA synchronous=NORMAL" in init
    assert config["CONN_MAX_AGE"] == 0


def test_no_url_is_the_project_file_with_the_sqlite_settings():
    config = database_config("", base_dir=BASE)
    assert config["NAME"] == BASE / "db.sqlite3"
    assert_shared_sqlite(config)


def test_a_relative_sqlite_url_is_under_the_project_with_the_settings():
    config = database_config("sqlite:///var/course.sqlite3", base_dir=BASE)
    assert config["NAME"] == BASE / "var/course.sqlite3"
    assert_shared_sqlite(config)


def test_an_absolute_sqlite_url_keeps_its_path_and_gets_the_settings():
    config = database_config("sqlite:////data/course.sqlite3", base_dir=BASE)
    assert config["NAME"] == Path("/data/course.sqlite3")
    assert_shared_sqlite(config)


def test_options_in_the_url_win():
    config = database_config("sqlite:////data/c.sqlite3?timeout=60", base_dir=BASE)
    assert config["OPTIONS"]["timeout"] == 60
    assert config["OPTIONS"]["transaction_mode"] == "IMMEDIATE"


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_postgresql_gets_no_sqlite_options_and_keeps_its_connections(scheme):
    config = database_config(f"{scheme}://u:pw@db.example:5433/course", base_dir=BASE)
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["NAME"], config["HOST"], config["PORT"]) == (
        "course",
        "db.example",
        5433,
    )
    assert config["CONN_MAX_AGE"] == 60
    assert not set(config.get("OPTIONS", {})) & set(SQLITE_OPTIONS)
