"""End-to-end grading latency and throughput, printed (never asserted).

Starts its own gunicorn and Celery workers against PostgreSQL and Redis,
then measures, in one run:
- API POST -> terminal status for tie-weights on GPT-2 small, one worker
  (median and p95; targets: < 250 ms and < 600 ms);
- throughput of light grades (block-param-count) with two workers
  (target: >= 10 per second);
- the cold path: `manage.py grade tie-weights` in a fresh sandbox.

    .venv/bin/python benchmarks/pipeline_bench.py [--short]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
TIE = (
    "def tie_weights(model):\n    model.lm_head.weight = model.transformer.wte.weight\n"
)
LIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
TERMINAL = {"passed", "failed", "error"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
        return subprocess.run(
            [PY, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def spawn(self, argv: list[str]) -> subprocess.Popen:
        log = tempfile.NamedTemporaryFile(
            "w", prefix="bench-", suffix=".log", delete=False
        )
        proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.procs.append(proc)
        return proc

    def start_web(self) -> None:
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
                "--threads",
                "4",
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

    def start_worker(self, name: str) -> None:
        self.spawn(
            [
                PY,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--concurrency=1",
                "--loglevel=WARNING",
                "--hostname",
                f"{name}@%h",
            ]
        )

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
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--short", action="store_true", help="few iterations (CI)")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/course_bench"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14")
    args = parser.parse_args()
    latency_n, burst_n = (8, 20) if args.short else (40, 100)

    ensure_database(args.database_url)
    bench = Bench(args.database_url, args.redis_url)
    try:
        bench.manage("migrate", "--no-input")
        bench.manage("load_content")
        bench.manage(
            "shell",
            "-c",
            "from django.contrib.auth.models import User\n"
            "User.objects.filter(username='bench').delete()\n"
            "User.objects.create_user('bench', password='bench-pass-123')",
        )
        bench.start_web()
        bench.token = bench.call(
            "POST",
            "/api/v1/auth/token/",
            {"username": "bench", "password": "bench-pass-123"},
        )["token"]

        cold_start = time.perf_counter()
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(TIE)
        verdict = json.loads(bench.manage("grade", "tie-weights", f.name, "--json"))
        cold = time.perf_counter() - cold_start
        assert verdict["status"] == "passed", verdict

        bench.start_worker("bench-1")
        warm_up = time.perf_counter()
        bench.submit_and_wait("tie-weights", TIE, poll=0.05)  # waits for the warm pool
        print(f"worker start + first grade: {time.perf_counter() - warm_up:.1f} s")
        times = [bench.submit_and_wait("tie-weights", TIE) for _ in range(latency_n)]
        median, p95 = statistics.median(times), pct(times, 0.95)

        bench.start_worker("bench-2")
        bench.submit_and_wait("block-param-count", LIGHT, poll=0.05)
        bench.submit_and_wait("block-param-count", LIGHT, poll=0.05)
        ids: list[str] = []
        burst = time.perf_counter()

        def post(n: int) -> None:
            for _ in range(n):
                ids.append(
                    bench.call(
                        "POST",
                        "/api/v1/exercises/block-param-count/submissions/",
                        {"code": LIGHT},
                    )["id"]
                )

        posters = [
            threading.Thread(target=post, args=(burst_n // 4,)) for _ in range(4)
        ]
        for t in posters:
            t.start()
        for t in posters:
            t.join()
        pending = set(ids)
        while pending:
            pending = {
                i
                for i in pending
                if bench.call("GET", f"/api/v1/submissions/{i}/")["status"]
                not in TERMINAL
            }
            time.sleep(0.05)
        throughput = len(ids) / (time.perf_counter() - burst)
    finally:
        bench.stop()

    print(f"cold path (manage.py grade tie-weights, new sandbox): {cold * 1000:.0f} ms")
    print(
        f"end to end, tie-weights on GPT-2 small, 1 worker, n={latency_n}: "
        f"median {median * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms "
        f"(targets 250 / 600 ms); cold/warm ratio {cold / median:.1f}x"
    )
    print(
        f"throughput, block-param-count, 2 workers, {len(ids)} grades: "
        f"{throughput:.1f} grades/s (target >= 10)"
    )


if __name__ == "__main__":
    main()
