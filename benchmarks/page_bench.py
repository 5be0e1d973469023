"""Lesson page speed under 50 concurrent clients, printed (never asserted).

Starts its own gunicorn (sync workers, as in the Dockerfile) against
PostgreSQL with content/ loaded, then drives one lesson page for a signed-in
learner (who also records a read on every view: the real path) with 50
concurrent connections, using wrk when it is installed (Debian's `wrk`,
installed by scripts/system_deps.sh test), else a Python thread pool.

Prints requests/s, client-side p50/p95 (includes queueing for a free worker)
and SERVER time p50/p95 from gunicorn's access log (%(D)s: microseconds the
worker spent on the request). Target: server p95 < 50 ms.

    .venv/bin/python benchmarks/page_bench.py [--short] [--seconds N]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_stack import ensure_database, free_port, pct
from readme_figures import show

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
LESSON = "weight-tying-124m"
CLIENTS = 50
WRK_SCRIPT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("BENCH %d %d %d %d %d %d\\n", summary.requests,
    summary.duration, latency:percentile(50), latency:percentile(95),
    e.status, e.connect + e.read + e.write + e.timeout))
end
"""
# One Django process loads the content and signs the benchmark learner in.
SETUP = """
import os
from pathlib import Path
from quiz.content.loader import content_load
content_load(root=Path(os.environ["PAGE_BENCH_CONTENT"]))
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
User.objects.filter(username="page-bench").delete()
user = User.objects.create_user("page-bench", password="page-bench-pass-123")
store = SessionStore()
store[SESSION_KEY] = str(user.pk)
store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
store[HASH_SESSION_KEY] = user.get_session_auth_hash()
store.create()
print(store.session_key)
"""


class Server:
    """gunicorn on a free port, logging each request's status and duration."""

    def __init__(self, env: dict, workers: int):
        self.env = env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.mktemp(prefix="page-bench-access-", suffix=".log"))
        self.log.touch()
        self.proc = subprocess.Popen(
            [
                PY,
                "-m",
                "gunicorn",
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--backlog",
                "256",
                "--access-logfile",
                str(self.log),
                "--access-logformat",
                "%(s)s %(D)s %(U)s",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=10)
                return
            except OSError:  # refused or reset while booting
                if self.proc.poll() is not None:
                    raise SystemExit("gunicorn exited at start") from None
                time.sleep(0.2)
        self.stop()
        raise SystemExit("gunicorn did not start")

    def offset(self) -> int:
        return self.log.stat().st_size

    def requests_since(self, offset: int, path: str) -> list[tuple[int, float]]:
        """(status, server ms) for each request to `path` logged after `offset`."""
        with self.log.open() as f:
            f.seek(offset)
            rows = []
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[2] == path:
                    rows.append((int(parts[0]), int(parts[1]) / 1000))
        return rows

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.unlink(missing_ok=True)


def load_with_wrk(url: str, cookie: str, seconds: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(WRK_SCRIPT)
    try:
        out = subprocess.run(
            [
                "wrk",
                "-t2",
                f"-c{CLIENTS}",
                f"-d{seconds}s",
                "--timeout",
                "30s",
                "-H",
                f"Cookie: {cookie}",
                "-s",
                f.name,
                url,
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=True,
        ).stdout
    finally:
        os.unlink(f.name)
    line = next(li for li in out.splitlines() if li.startswith("BENCH "))
    requests, duration_us, p50, p95, bad_status, socket_errors = map(
        int, line.split()[1:]
    )
    return {
        "tool": "wrk",
        "requests": requests,
        "rps": requests / (duration_us / 1e6),
        "p50": p50 / 1000,
        "p95": p95 / 1000,
        "errors": bad_status + socket_errors,
    }


def load_with_threads(url: str, cookie: str, seconds: int) -> dict:
    """The fallback client: 50 threads, each requesting in a loop for `seconds`."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client() -> None:
        nonlocal errors
        while time.monotonic() < stop_at:
            request = urllib.request.Request(url, headers={"Cookie": cookie})
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    response.read()
                    ok = response.status == 200
            except (urllib.error.URLError, OSError):
                ok = False
            took = (time.perf_counter() - start) * 1000
            with lock:
                if ok:
                    latencies.append(took)
                else:
                    errors += 1

    start = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        for _ in range(CLIENTS):
            pool.submit(client)
    elapsed = time.perf_counter() - start
    return {
        "tool": "python threads",
        "requests": len(latencies) + errors,
        "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p95": pct(latencies, 0.95) if latencies else float("nan"),
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--short", action="store_true", help="~30 s in all (CI)")
    parser.add_argument("--seconds", type=int, help="length of the measured run")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn workers")
    parser.add_argument(
        "--database-url",
        default="postgres://postgres@127.0.0.1:5432/course_page_bench",
    )
    parser.add_argument(
        "--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/14")
    )
    parser.add_argument("--python-client", action="store_true", help="skip wrk")
    parser.add_argument("--content", default=str(ROOT / "content"), help="tree to load")
    args = parser.parse_args()
    seconds = args.seconds or (6 if args.short else 30)

    ensure_database(args.database_url)
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": os.environ.get("SECRET_KEY", "benchmark-only"),
        "DEBUG": "0",
        "SECURE_COOKIES": "0",
        "LOG_LEVEL": "WARNING",
    }

    def manage(*argv: str) -> str:
        result = subprocess.run(
            [PY, "manage.py", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
        )
        if result.returncode:
            raise SystemExit(f"manage.py {argv[0]} failed:\n{result.stderr}")
        return result.stdout

    manage("migrate", "--no-input")
    env["PAGE_BENCH_CONTENT"] = args.content
    session = manage("shell", "-c", SETUP).strip().splitlines()[-1]
    cookie = f"sessionid={session}"
    path = f"/lessons/{LESSON}/"
    use_wrk = (
        not args.python_client
        and subprocess.run(
            ["sh", "-c", "command -v wrk"], capture_output=True
        ).returncode
        == 0
    )

    server = Server(env, args.workers)
    try:
        url = server.url + path
        request = urllib.request.Request(url, headers={"Cookie": cookie})
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read().decode()
        if "page-bench" not in body:
            raise SystemExit("the benchmark session is not signed in")
        # Warm every worker (imports, connections, caches) one request at a
        # time, so no backlog is left queued in front of the measured run.
        for _ in range(2 * args.workers):
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
        load = load_with_wrk if use_wrk else load_with_threads
        offset = server.offset()
        client = load(url, cookie, seconds)
        time.sleep(0.5)  # let the last log lines land
        logged = server.requests_since(offset, path)
    finally:
        server.stop()

    server_ms = [ms for status, ms in logged if status == 200]
    not_ok = sum(1 for status, _ in logged if status != 200)
    print(
        f"lesson page {path}, signed-in learner, {CLIENTS} concurrent clients "
        f"({client['tool']}), {seconds} s, gunicorn {args.workers} sync workers "
        f"on {os.cpu_count()} cores:"
    )
    print(
        f"  {client['rps']:.0f} requests/s, {client['requests']} requests, "
        f"{client['errors'] + not_ok} errors"
    )
    print(
        f"  client latency: p50 {client['p50']:.1f} ms, p95 {client['p95']:.1f} ms "
        "(includes waiting for a free worker)"
    )
    if server_ms:
        print(
            f"  server time: p50 {statistics.median(server_ms):.1f} ms, "
            f"p95 {pct(server_ms, 0.95):.1f} ms over {len(server_ms)} requests "
            "(target p95 < 50 ms)"
        )
    else:
        print("  server time: no successful requests logged")
    print("== beside the README")
    show(
        "lesson page, 50 clients (wrk), 3 sync workers: server time",
        f"({CLIENTS} clients, {args.workers} workers, {client['tool']}) p50 "
        f"{statistics.median(server_ms):.1f} ms, p95 "
        f"{pct(server_ms, 0.95):.1f} ms, {client['rps']:.0f} req/s"
        if server_ms
        else "no successful requests logged",
    )


if __name__ == "__main__":
    main()
