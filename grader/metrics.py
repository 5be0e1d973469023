"""Prometheus metrics of the grader and its event streams.

Counted where they happen: stream refusals and open streams in the web
process; grades, crashes, budgets exceeded and grades set aside in the
worker that ran them; slots busy and burst slots in use read from the
worker's lanes at scrape.
Read from the database at scrape (any process): queue depth per lane.

A web process serves its own and the database's at /metrics
(config.metrics). A worker serves its own on GRADER_METRICS_PORT when that
is set (one port per worker host: Prometheus scrapes each host). On one
host, PROMETHEUS_MULTIPROC_DIR makes gunicorn's processes share theirs.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily

STREAMS_OPEN = Gauge(
    "course_streams_open",
    "Submission event streams open in this web process.",
    multiprocess_mode="livesum",
)
STREAM_REFUSALS = Counter(
    "course_stream_refusals",
    "Event streams refused by a cap (learner: per learner; process: per "
    "process; opening: too many being set up at once).",
    ["cap"],
)
GRADE_SECONDS = Histogram(
    "course_grade_seconds",
    "Time a grade took in the grader, per exercise and lane.",
    ["exercise", "lane"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120),
)
GRADES = Counter("course_grades", "Grades finished, by status.", ["status"])
SANDBOX_CRASHES = Counter(
    "course_sandbox_crashes",
    "Grades whose sandbox died (killed, out of memory, a crash).",
)
BUDGETS_EXCEEDED = Counter(
    "course_time_budgets_exceeded",
    "Grades stopped at their exercise's time budget.",
)
SET_ASIDE = Counter(
    "course_grades_set_aside",
    "Slow grades stopped while the burst was full, to run again later.",
)


def stream_opened() -> None:
    STREAMS_OPEN.inc()


def stream_closed() -> None:
    STREAMS_OPEN.dec()


def stream_refused(cap: str) -> None:
    STREAM_REFUSALS.labels(cap=cap).inc()


def grade_set_aside() -> None:
    SET_ASIDE.inc()


def grade_recorded(*, exercise: str, lane: str, verdict) -> None:
    """Count one finished grade (the worker, once its verdict is saved)."""
    GRADES.labels(status=verdict.status).inc()
    if verdict.duration_ms is not None:
        GRADE_SECONDS.labels(exercise=exercise, lane=lane).observe(
            verdict.duration_ms / 1000
        )
    if verdict.status == "error":
        names = {check.name for check in verdict.checks}
        if "time limit" in names:
            BUDGETS_EXCEEDED.inc()
        elif "run" in names:
            SANDBOX_CRASHES.inc()


class QueueCollector:
    """Queue depth per lane and grades running, from the database at scrape."""

    def collect(self):
        from django.db.models import Count

        from grader.models import Exercise, Submission

        depth = GaugeMetricFamily(
            "course_queue_depth", "Submissions queued, per lane.", labels=["lane"]
        )
        counts = dict(
            Submission.objects.filter(status=Submission.Status.QUEUED)
            .values_list("lane")
            .annotate(n=Count("pk"))
            .values_list("lane", "n")
        )
        for lane in Exercise.Lane.values:
            depth.add_metric([lane], counts.get(lane, 0))
        yield depth
        running = GaugeMetricFamily(
            "course_grades_running", "Submissions being graded (all workers)."
        )
        running.add_metric(
            [], Submission.objects.filter(status=Submission.Status.RUNNING).count()
        )
        yield running


class LanesCollector:
    """This worker's grading slots: busy, and burst slots in use (at scrape)."""

    def collect(self):
        from grader.lanes import lanes_get

        lanes = lanes_get()
        with lanes.lock:
            total, active = lanes.total, sum(lanes.active.values())
        busy = GaugeMetricFamily(
            "course_grading_slots_busy", "Grades running in this worker."
        )
        busy.add_metric([], total)
        yield busy
        slots = GaugeMetricFamily("course_grading_slots", "This worker's slots.")
        slots.add_metric([], lanes.slots)
        yield slots
        burst = GaugeMetricFamily(
            "course_grading_burst_slots_busy",
            "Grades that outran their expected time and moved to a burst slot.",
        )
        burst.add_metric([], total - active)
        yield burst
