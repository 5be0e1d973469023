"""The deadline rush: N open submission pages on one web process.

Starts its own stack on PostgreSQL (database course_streams) and Redis: one
web process as deployed (gunicorn with one uvicorn worker on config.asgi,
DEBUG=0), and N learners' event streams open on queued submissions (five
per learner: the per-learner cap). Then:
- idle: the web process's Redis connections, its database queries per
  second (its own counter, read from /metrics) and RSS, every stream open;
- pages: /healthz and a lesson page, timed while every stream is open and
  while the grades arrive;
- a web restart: the web process stopped (SIGTERM) and started again with
  every page open; the pages reconnect as static/js/submission.js makes
  them (its jittered waits, its polls), and pages are timed until every
  page streams again (--no-storm skips it);
- verdicts: a real Celery worker grades the submissions (--short: 25 of
  them; the others are cancelled first, which pushes 175 events at once);
  each stream's event is timed against the worker's save (finished_at).

Each page opens its own stream as the browser does, retrying when it is
refused, so N pages open over the time the server takes to set them up
(STREAM_OPENING_MAX at once).

--server wsgi runs the WSGI server the ASGI one replaced (the compose
file's former command: gunicorn gthread, 3 workers x 16 threads) on the
same code, for the before/after: there each stream holds a thread.

    .venv/bin/python benchmarks/stream_bench.py [--short] [--streams N]
        [--server asgi|wsgi] [--no-storm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from bench_stack import ROOT, Bench, ensure_database, pct
from readme_figures import Gates, show
from sse_client import Stream, fetch, follow, get, open_stream

PER_LEARNER = 5
# The submissions wait in a lane no worker takes (dispatch claims "light" and
# "heavy" only) until the verdict phase, so --short can warm its worker while
# the streams are measured idle; then they move to "light" and a wake-up goes.
HELD = "held"
EXERCISE = "block-param-count"
LESSON_SLUG = "parameter-formula"
LESSON = f"/lessons/{LESSON_SLUG}/"
IDLE_SECONDS = 5.0
STORM_AFTER = 5.0  # seconds of pages timed once every page is back


def page_script() -> tuple[int, int, set[str]]:
    """static/js/submission.js's reconnection waits (ms) and the statuses that
    end it, read from the script itself: the pages here follow it if it
    changes (its logic is mirrored in browser() and backoff())."""
    text = (ROOT / SCRIPT).read_text()
    waits = dict(re.findall(r"const (RETRY_MS|RETRY_MAX_MS) = (\d+);", text))
    terminal = re.search(r"const TERMINAL = new Set\(\[([^\]]*)\]\)", text)
    if len(waits) != 2 or not terminal:
        sys.exit(f"{SCRIPT}: RETRY_MS, RETRY_MAX_MS or TERMINAL not found")
    statuses = set(re.findall(r'"([a-z]+)"', terminal.group(1)))
    return int(waits["RETRY_MS"]), int(waits["RETRY_MAX_MS"]), statuses


SCRIPT = "static/js/submission.js"
RETRY_MS, RETRY_MAX_MS, TERMINAL = page_script()


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


@dataclass
class Page:
    """One open submission page: its stream and what the page is doing."""

    pk: str
    key: str
    stream: Stream
    mode: str = "connecting"  # or "stream" (one held), "poll" (recovering)
    polls: int = 0
    refusals: list[int] = field(default_factory=list)  # statuses


def streaming(page: Page) -> bool:
    """Its stream is open and has sent its first event."""
    return page.mode == "stream" and bool(page.stream.events)


def backoff(failures: int) -> float:
    """submission.js's backoff(): seconds, half to whole of a doubling wait."""
    wait = min(RETRY_MAX_MS, RETRY_MS * 2**failures)
    return (wait / 2 + random.random() * wait / 2) / 1000


async def browser(host: str, port: int, page: Page) -> None:
    """The page as static/js/submission.js makes it: it opens its stream, and
    when that fails (refused, cut, or ended at its lifetime before the
    verdict) it opens another after backoff(); past 2 failures since its last
    status event it polls first, with the same growing waits, until the
    server answers. Every connection's events go to `page.stream`, and each
    poll's answer too, so `has_verdict` reads either."""
    failures = 0
    path = f"/api/v1/submissions/{page.pk}/events/"
    while True:
        try:
            again = await open_stream(host, port, path, page.key)
        except OSError:
            again = None  # the error event
        if again is not None and again.status != 200:
            page.refusals.append(again.status)
        elif again is not None:
            stream = page.stream
            if stream.status:
                stream.reconnects += 1
            stream.status, stream.headers = again.status, again.headers
            stream.reader, stream.writer, stream.ended = (
                again.reader,
                again.writer,
                False,
            )
            page.mode = "stream"
            seen = len(stream.events)
            await follow(stream)
            if has_verdict(stream) or stream.closed:
                return
            names = {event[1] for event in stream.events[seen:]}
            if "status" in names:
                failures = 0
            if "refused" in names:
                failures = max(failures, 2)
        page.mode = "connecting"
        failures += 1  # retryLater()
        await asyncio.sleep(backoff(failures))
        if failures > 2:  # recover(): poll until the server answers
            page.mode = "poll"
            while not await poll_once(host, port, page):
                failures += 1
                await asyncio.sleep(backoff(failures))
            if has_verdict(page.stream) or page.stream.closed:
                return
            page.mode = "connecting"


async def poll_once(host: str, port: int, page: Page) -> bool:
    """submission.js's pollOnce(): the submission's JSON; True if answered."""
    page.polls += 1
    try:
        status, body, _ = await fetch(
            host, port, f"/api/v1/submissions/{page.pk}/", page.key
        )
    except OSError:
        return False
    if status != 200:
        return False
    data = json.loads(body)
    data["terminal"] = data.get("status") in TERMINAL
    page.stream.events.append((time.monotonic(), "poll", data, time.time()))
    return True


async def storm(bench: Bench, args, pages: list[Page], paths, gates: Gates) -> None:
    """The web process stopped (SIGTERM, as a deploy or a supervisor stops
    it) and started again, every page open on it: the pages reconnect at
    once. Pages are timed from the new process's first answer until every
    page streams again, and for STORM_AFTER seconds more."""
    host, port = "127.0.0.1", bench.port
    master = bench.procs[0]
    started = time.monotonic()
    os.killpg(master.pid, signal.SIGTERM)
    await asyncio.to_thread(master.wait, 60)
    stopped = time.monotonic() - started
    bench.procs.remove(master)
    await asyncio.to_thread(start_web, bench, args.server)
    bench.procs.insert(0, bench.procs.pop())  # the web process first (web_pids)
    up = time.monotonic() - started
    times: list[float] = []
    settled = None
    polls_then = 0
    deadline = time.monotonic() + (30 if args.short else 90)
    while time.monotonic() < deadline:
        times += await page_times(host, port, paths, 1, 60.0)
        now = time.monotonic()
        if settled is None and all(map(streaming, pages)):
            settled, polls_then = now, sum(p.polls for p in pages)
        if settled is not None and now - settled >= STORM_AFTER:
            break
        await asyncio.sleep(0.1)
    modes = Counter(p.mode for p in pages)
    polled = sum(p.polls for p in pages) - polls_then
    after = time.monotonic() - settled if settled else float("nan")
    back = f"{settled - started:.1f} s" if settled else "never"
    print(
        f"== storm: SIGTERM, stopped in {stopped:.1f} s, the new process answered "
        f"at {up:.1f} s; every page streaming again at {back} "
        f"({modes['stream']} streaming, {modes['poll']} polling, "
        f"{modes['connecting']} reconnecting; {sum(p.polls for p in pages)} polls, "
        f"then {polled / after:.1f}/s); pages p50 {pct(times, 0.5) * 1000:.0f} ms, p95 "
        f"{pct(times, 0.95) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
        f"({len(times)})"
    )
    show("streams: web restart, every page streaming again", back)
    show("streams: web restart, pages p95 / max",
         f"{pct(times, 0.95) * 1000:.0f} / {max(times) * 1000:.0f} ms")  # fmt: skip
    gates.check(settled is not None, "every page streams again after the restart")
    gates.check(max(times) < 60.0, "no page stalled 60 s in the storm")


async def run(bench: Bench, pairs, args, gates: Gates) -> None:
    host, port = "127.0.0.1", bench.port
    paths = ["/healthz", LESSON]
    started = time.monotonic()
    if args.server == "wsgi":
        opening = [
            asyncio.create_task(
                open_stream(host, port, f"/api/v1/submissions/{pk}/events/", key)
            )
            for key, pk in pairs
        ]
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
    pages = [Page(pk, key, Stream()) for key, pk in pairs]  # each opens its own
    browsing = [asyncio.create_task(browser(host, port, page)) for page in pages]
    held = [page.stream for page in pages]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not all(map(streaming, pages)):
        await asyncio.sleep(0.1)
    ready = sum(map(streaming, pages))
    refusals = Counter(code for page in pages for code in page.refusals)
    print(
        f"== {args.server}: {len(pages)} pages, {ready} with their stream's first "
        f"event in {time.monotonic() - started:.1f} s (refused on the way and "
        f"tried again: {dict(refusals) or 'none'})"
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
    if args.storm:
        await storm(bench, args, pages, paths, gates)
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
    for task in browsing:
        task.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="200 streams (CI)")
    parser.add_argument("--streams", type=int, help="default 2000 (--short: 200)")
    parser.add_argument("--server", choices=("asgi", "wsgi"), default="asgi")
    parser.add_argument(
        "--no-storm",
        dest="storm",
        action="store_false",
        help="skip the web restart with every page open",
    )
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
