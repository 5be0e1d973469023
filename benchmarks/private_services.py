"""A private Redis and a private PostgreSQL cluster, each on a port of its own.

For what restarts or kills them: the fault tests (tests/pipeline) and the
deadline drill (benchmarks/deadline_drill.py), so neither disturbs the
machine's shared services.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def celery_worker_argv(python: str, hostname: str, loglevel: str = "INFO") -> list[str]:
    """A grading worker's command line, as compose runs it (named `hostname`)."""
    return [python, "-m", "celery", "-A", "config", "worker",
            f"--loglevel={loglevel}", "--hostname", hostname]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, *, timeout: float, interval: float = 0.1, what: str = ""):
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
        wait_for(self._pong, timeout=60, what="redis")  # a loaded host

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
            timeout=360,  # beyond pg_ctl's own -t
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
                "-t",
                "300",  # crash recovery on a loaded host outlasts the 60 s default
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
