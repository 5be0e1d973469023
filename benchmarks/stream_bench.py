"""The deadline rush: N open submission pages on one web process.

Starts its own stack on PostgreSQL (database course_streams) and Redis: one
web process as deployed (gunicorn with one uvicorn worker on config.asgi,
DEBUG=0), and N learners' event streams open on queued submissions (five
per learner: the per-learner cap). Then:
- idle: the web process's Redis connections, its database queries per
  second (its own counter, read from /metrics) and RSS, every stream open;
- pages: /healthz and a lesson page, timed while every stream is open and
  while the grades arrive;
- verdicts: a real Celery worker grades the submissions (--short: 25 of
  them; the others are cancelled first, which pushes 175 events at once);
  each stream's event is timed against the worker's save (finished_at).

--server wsgi runs the WSGI server the ASGI one replaced (the compose
file's former command: gunicorn gthread, 3 workers x 16 threads) on the
same code, for the before/after: there each stream holds a thread.

    .venv/bin/python benchmarks/stream_bench.py [--short] [--streams N]
        [--server asgi|wsgi]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import psycopg
from bench_stack import Bench, ensure_database, pct
from readme_figures import Gates, show
from sse_client import follow, get, open_stream

PER_LEARNER = 5
# The submissions wait in a lane no worker takes (dispatch claims "light" and
# "heavy" only) until the verdict phase, so --short can warm its worker while
# the streams are measured idle; then they move to "light" and a wake-up goes.
HELD = "held"
EXERCISE = "block-param-count"
LESSON_SLUG = "parameter-formula"
LESSON = f"/lessons/{LESSON_SLUG}/"
IDLE_SECONDS = 5.0


def setup(bench: Bench, streams: int) -> list[tuple[str, str]]:
    """Learners with tokens and `streams` queued submissions: [(token, id)]."""
    learners = -(-streams // PER_LEARNER)
    out = bench.manage("shell", "-c", (
        "import json\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', '--no-input', verbosity=0)\n"
        "from grader.models import Exercise\n"
        "from quiz.content.models import Lesson\n"
        f"if not (Exercise.objects.filter(slug='{EXERCISE}').exists()\n"
        f"        and Lesson.objects.filter(slug='{LESSON_SLUG}').exists()):\n"
        "    call_command('load_content', verbosity=0)\n"
        "from django.conf import settings\n"
        "if not (settings.STATIC_ROOT / 'staticfiles.json').exists():\n"
        "    call_command('collectstatic', '--no-input', verbosity=0)\n"
        "from django.contrib.auth.models import User\n"
        "from grader.models import Exercise, Submission\n"
        "from quiz.core.api.tokens import token_issue\n"
        "Submission.objects.all().delete()\n"
        "User.objects.filter(username__startswith='stream').delete()\n"
        f"exercise = Exercise.objects.get(slug='{EXERCISE}')\n"
        "users = User.objects.bulk_create(\n"
        f"    [User(username=f'stream{{n}}') for n in range({learners})])\n"
        "out = []\n"
        "for user in users:\n"
        "    key = token_issue(user=user)[1]\n"
        f"    for n in range({PER_LEARNER}):\n"
        "        s = Submission.objects.create(user=user, exercise=exercise,\n"
        f"            code=exercise.solution, seed=n, lane='{HELD}')\n"
        "        out.append((key, str(s.pk)))\n"
        f"print(json.dumps(out[:{streams}]))\n"
    ))  # fmt: skip
    return [tuple(pair) for pair in json.loads(out.strip().splitlines()[-1])]


def start_web(bench: Bench, server: str) -> None:
    if server == "asgi":
        kind = ["--config", "deploy/gunicorn.conf.py", "config.asgi"]
        kind += ["--workers", "1"]
    else:
        kind = ["config.wsgi", "--worker-class", "gthread", "--workers", "3"]
        kind += ["--threads", "16"]
    bench.spawn(
        [sys.executable, "-m", "gunicorn", *kind, "--bind",
         f"127.0.0.1:{bench.port}", "--backlog", "4096", "--timeout", "120"],
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(bench.base + "/healthz", timeout=5)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the web server did not start")


def web_pids(bench: Bench) -> list[int]:
    """The web server's worker processes (gunicorn's children)."""
    master = bench.procs[0].pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(pid) for pid in children]


def redis_connections(pids: list[int], port: int = 6379) -> int:
    """TCP connections of these processes to Redis's port (from /proc)."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[9] in inodes and fields[3] == "01":
                count += 1
    return count


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        status = Path(f"/proc/{pid}/status").read_text()
        total += int(re.search(r"VmRSS:\s+(\d+)", status)[1])
    return total / 1024


def queries(bench: Bench) -> float:
    """The web process's database query counter (this scrape's own excluded)."""
    with urllib.request.urlopen(bench.base + "/metrics", timeout=30) as response:
        text = response.read().decode()
    match = re.search(r"^course_db_queries_total (\S+)$", text, re.M)
    return float(match[1])


async def page_times(host, port, paths, rounds: int, timeout: float) -> list[float]:
    times = []
    for _ in range(rounds):
        for path in paths:
            try:
                status, seconds = await asyncio.wait_for(get(host, port, path), timeout)
                times.append(seconds if status == 200 else timeout)
            except TimeoutError:
                times.append(timeout)
    return times


def release(bench: Bench, ids: list[str]) -> None:
    """Let a worker take these submissions (they were held), and wake it."""
    from celery import Celery

    with psycopg.connect(bench.env["DATABASE_URL"], autocommit=True) as conn:
        conn.execute(
            "UPDATE grader_submission SET lane = 'light' "
            "WHERE id = ANY(%s::uuid[]) AND status = 'queued'",
            [ids],
        )
    app = Celery(broker=bench.env["REDIS_URL"])
    app.send_task(
        "grader.grade_submission", args=[None], queue=bench.env["CELERY_QUEUE"]
    )


def has_verdict(stream) -> bool:
    return any(e[2].get("terminal") for e in stream.events)


async def page(host: str, port: int, pk: str, key: str, stream) -> None:
    """A submission page: its stream, reopened as EventSource does when it
    ends before the verdict; every connection's events go to the first's."""
    while True:
        await follow(stream)
        if has_verdict(stream) or stream.closed:
            return
        await asyncio.sleep(0.5)  # the stream's retry: 500 ms
        again = await open_stream(host, port, f"/api/v1/submissions/{pk}/events/", key)
        if again.status != 200:
            return  # refused: the page would poll
        stream.reader, stream.writer, stream.ended = again.reader, again.writer, False
        stream.headers = again.headers
        stream.reconnects += 1


async def run(bench: Bench, pairs, args, gates: Gates) -> None:
    host, port = "127.0.0.1", bench.port
    paths = ["/healthz", LESSON]
    started = time.monotonic()
    opening = [
        asyncio.create_task(
            open_stream(host, port, f"/api/v1/submissions/{pk}/events/", key)
        )
        for key, pk in pairs
    ]
    if args.server == "wsgi":
        # Every page holds a thread until its verdict (or 30 s): time the
        # site while they are held, as a learner arriving then would see it.
        await asyncio.sleep(2.0)
        during = []
        for _ in range(5):  # as the issue measured it: five, 0.5 s apart
            during += await page_times(host, port, ["/healthz"], 1, 60.0)
            await asyncio.sleep(0.5)
        print(
            f"== wsgi (3 x 16 threads), {len(pairs)} streams opening: /healthz "
            + ", ".join(f"{t:.2f} s" if t < 60 else "timed out (60 s)" for t in during)
        )
        for task in opening:
            task.cancel()
        await asyncio.gather(*opening, return_exceptions=True)
        return
    streams = await asyncio.gather(*opening, return_exceptions=True)
    refused = [s for s in streams if isinstance(s, Exception) or s.status != 200]
    held = [s for s in streams if not isinstance(s, Exception) and s.status == 200]
    for stream, (key, pk) in zip(streams, pairs, strict=True):
        if stream in held:
            asyncio.create_task(page(host, port, pk, key, stream))
    first = [asyncio.wait_for(s.arrived.wait(), 120) for s in held]
    await asyncio.gather(*first, return_exceptions=True)
    ready = sum(1 for s in held if s.events)
    why = Counter(
        type(s).__name__ if isinstance(s, Exception) else s.status for s in refused
    )
    print(
        f"== {args.server}: {len(held)} streams held ({ready} with their first "
        f"event, {len(refused)} refused{': ' if why else ''}"
        f"{', '.join(f'{n} {k}' for k, n in why.items())}) in "
        f"{time.monotonic() - started:.1f} s"
    )

    await asyncio.sleep(0.5)
    pids = web_pids(bench)
    q0 = await asyncio.to_thread(queries, bench)
    q1 = await asyncio.to_thread(queries, bench)  # the cost of one scrape
    idle = 2.0 if args.short else IDLE_SECONDS
    await asyncio.sleep(idle)
    q2 = await asyncio.to_thread(queries, bench)
    per_second = (q2 - q1 - (q1 - q0)) / idle
    redis_now = redis_connections(pids)
    rss = rss_mb(pids)
    open_now = sum(1 for s in held if not s.ended)
    print(
        f"  idle, {open_now} streams open: {redis_now} Redis connections, "
        f"{per_second:.1f} database queries/s, RSS {rss:.0f} MB"
    )
    show("streams, idle: Redis connections / database queries per second",
         f"{redis_now} / {per_second:.1f}")  # fmt: skip
    gates.check(redis_now <= 10, f"Redis connections {redis_now} <= 10")
    gates.check(per_second <= 5, f"idle queries {per_second:.1f}/s <= 5")

    timeout = 60.0
    quiet = await page_times(host, port, paths, 10 if args.short else 25, timeout)
    stalled = sum(1 for t in quiet if t >= timeout)
    print(
        f"  pages while the streams wait: p50 {pct(quiet, 0.5) * 1000:.0f} ms, "
        f"p95 {pct(quiet, 0.95) * 1000:.0f} ms, max {max(quiet) * 1000:.0f} ms"
        + (f", {stalled} timed out after {timeout:.0f} s" if stalled else "")
    )
    graded = held
    if args.short:  # 25 verdicts; the rest cancelled, 175 events at once
        graded, cancelled = held[:25], held[25:]
        ids = [s.events[0][2]["id"] for s in cancelled]
        with psycopg.connect(bench.env["DATABASE_URL"], autocommit=True) as conn:
            conn.execute(
                "UPDATE grader_submission SET status='cancelled', "
                "finished_at=now() WHERE id = ANY(%s::uuid[])",
                [ids],
            )
        import redis

        client = redis.Redis.from_url(bench.env["REDIS_URL"])
        channel = bench.env["CELERY_QUEUE"] + ":submission:"
        for pk in ids:
            client.publish(channel + pk, pk)
    if not args.short:
        bench.start_worker("streams", slots=2)
    release(bench, [s.events[0][2]["id"] for s in graded])
    loaded: list[float] = []

    deadline = time.monotonic() + (120 if args.short else 600)

    async def pages_meanwhile():
        while not all(map(has_verdict, graded)) and time.monotonic() < deadline:
            loaded.extend(await page_times(host, port, paths, 1, timeout))
            await asyncio.sleep(0.1)

    waited = asyncio.create_task(pages_meanwhile())
    while not all(map(has_verdict, graded)) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await waited
    done = [s for s in graded if s.events and s.events[-1][2].get("terminal")]
    ids = [s.events[-1][2]["id"] for s in done]
    with psycopg.connect(bench.env["DATABASE_URL"], autocommit=True) as conn:
        saved = dict(
            conn.execute(
                "SELECT id::text, extract(epoch from finished_at) "
                "FROM grader_submission WHERE id = ANY(%s::uuid[])",
                [ids],
            ).fetchall()
        )
    lags = [
        s.events[-1][3] - float(saved[s.events[-1][2]["id"]])
        for s in done
        if saved.get(s.events[-1][2]["id"])
    ] or [float("nan")]
    loaded = loaded or [float("nan")]
    print(
        f"  verdicts: {len(done)} of {len(graded)} streams got theirs; saved -> "
        f"event p50 {pct(lags, 0.5) * 1000:.0f} ms, p95 {pct(lags, 0.95) * 1000:.0f}"
        f" ms; pages meanwhile p50 {pct(loaded, 0.5) * 1000:.0f} ms, p95 "
        f"{pct(loaded, 0.95) * 1000:.0f} ms, max {max(loaded) * 1000:.0f} ms"
    )
    show("streams held on one web process", f"{open_now}")
    show("streams: pages (/healthz, a lesson) p95 while all are open",
         f"{pct(quiet + loaded, 0.95) * 1000:.0f} ms")  # fmt: skip
    show("streams: worker's save -> event p50 / p95",
         f"{pct(lags, 0.5) * 1000:.0f} / {pct(lags, 0.95) * 1000:.0f} ms")  # fmt: skip
    show("streams: web process RSS", f"{rss:.0f} MB")
    gates.check(open_now == len(pairs), f"{open_now} of {len(pairs)} streams held")
    gates.check(len(done) == len(graded), f"{len(done)} of {len(graded)} verdicts")
    if not args.short:
        gates.check(open_now >= 2000, "2,000 streams on one process")
        gates.check(pct(quiet + loaded, 0.95) < 0.1, "page p95 under 100 ms")
        gates.check(pct(lags, 0.95) < 0.25, "save -> event p95 under 250 ms")
    for stream in held:
        stream.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="200 streams (CI)")
    parser.add_argument("--streams", type=int, help="default 2000 (--short: 200)")
    parser.add_argument("--server", choices=("asgi", "wsgi"), default="asgi")
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/course_streams"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()
    count = args.streams or (200 if args.short else 2000)
    ensure_database(args.database_url)
    bench = Bench(args.database_url, args.redis_url)
    bench.env["GRADER_MEASURE_ON_START"] = "0"
    bench.env["STREAM_MAX_PER_PROCESS"] = str(max(5000, count + 100))
    gates = Gates()
    try:
        pairs = setup(bench, count)
        start_web(bench, args.server)
        if args.short and args.server == "asgi":
            # It warms (torch, GPT-2: seconds of both cores) while the streams
            # open and idle; the full run starts it after its page timings.
            bench.start_worker("streams", slots=2)
        asyncio.run(run(bench, pairs, args, gates))
    finally:
        bench.stop()
    gates.finish()


if __name__ == "__main__":
    main()
