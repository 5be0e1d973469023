"""DATABASES from DATABASE_URL, with the settings SQLite needs to be shared.

The web server and the grading worker write one database at once. SQLite's
defaults (a rollback journal, DEFERRED transactions that fail at once when
they must upgrade a read lock to a write lock, a 5 s wait) turn that into
"database is locked" errors, so every SQLite database gets, however it is
named: WAL (readers never block the writer), IMMEDIATE transactions (a
write takes its lock up front, and waits for it), and a generous wait.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url

SQLITE_ENGINE = "django.db.backends.sqlite3"
SQLITE_OPTIONS = {
    "timeout": 20,
    "transaction_mode": "IMMEDIATE",
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}
# PostgreSQL keeps its connections this long (seconds); SQLite opens one per
# request, which costs nothing and holds no lock between requests.
CONN_MAX_AGE = 60


def database_config(url: str, *, base_dir: Path, pool: int = 0) -> dict:
    """The `default` database for DATABASE_URL `url` (empty: base_dir/db.sqlite3).

    A relative SQLite path is under `base_dir`, as the default file is, so
    the web server and a worker started from another folder share one file.
    Options given in the URL's query win over SQLITE_OPTIONS.

    `pool` > 0 (PostgreSQL; the ASGI web process): a psycopg pool of at most
    that many connections instead of one persistent connection per thread.
    Under ASGI every request's synchronous part runs in a thread of its own,
    so per-thread connections would grow with the requests in flight (a
    burst of stream opens ran the server out of connections); the pool
    bounds them, and a connection closed by Django goes back to it.
    """
    if not url:
        config = {"ENGINE": SQLITE_ENGINE, "NAME": base_dir / "db.sqlite3"}
    else:
        config = dj_database_url.parse(url, conn_max_age=CONN_MAX_AGE)
    if config["ENGINE"] != SQLITE_ENGINE:
        if pool > 0:
            config["CONN_MAX_AGE"] = 0  # Django's rule with a pool
            config["OPTIONS"] = {
                **config.get("OPTIONS", {}),
                "pool": {"min_size": 1, "max_size": pool, "timeout": 30},
            }
        return config
    name = str(config["NAME"])
    if name != ":memory:" and not name.startswith("file:"):
        config["NAME"] = base_dir / name  # an absolute name stays as it is
    config["CONN_MAX_AGE"] = 0
    config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
    return config
