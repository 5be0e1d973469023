"""The Celery app: JSON only, late acks, one grading process per host (DESIGN.md)."""

import logging
import os

from celery import Celery
from celery.signals import worker_ready
from grading_engine import gc_policy

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

log = logging.getLogger("grader.worker")
app = Celery("course")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def _start_grading(**kwargs) -> None:
    """Warm the sandbox pool, take back what a dead predecessor left, measure.

    In a thread: warming (torch, GPT-2 small) takes seconds and the first
    grade waits for it on the runner lock anyway. Rows a killed worker of
    this host left `running` go back to the queue (or end as an error after
    a second crash), one wake-up starts the queue moving, and exercises
    without a measured time budget are measured (grader.budgets).
    """
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    if settings.GRADER_METRICS_PORT:
        from prometheus_client import REGISTRY, start_http_server

        from grader.metrics import LanesCollector

        # This host's grades, crashes and slots, for Prometheus to scrape.
        # A port already taken costs the metrics, never the grading.
        try:
            start_http_server(settings.GRADER_METRICS_PORT)
            REGISTRY.register(LanesCollector())
        except OSError as exc:
            log.warning(
                "metrics not served on port %s: %s", settings.GRADER_METRICS_PORT, exc
            )
    import threading

    def start() -> None:
        try:
            warm_and_resume()
        finally:
            gc_policy.started()  # loaded: the usual pace from here

    def warm_and_resume() -> None:
        from grader import submission_grading, tasks
        from grader.process_runner import runner_get
        from grader.regrade_grading import regrades_requeue_abandoned

        # Before warming, which takes many seconds on a busy machine: the
        # other workers, already warm, grade what a dead one left meanwhile.
        moved = submission_grading.with_db_retry(
            lambda: submission_grading.submissions_requeue_abandoned(local_only=True)
            + regrades_requeue_abandoned()
        )
        if moved:
            tasks.wake()
        if settings.GRADER_RUNNER == "pool":
            runner = runner_get()
            log.info("grading pool ready: %d sandbox slots", runner.size)
        tasks.wake()
        if settings.GRADER_RUNNER == "pool" and settings.GRADER_MEASURE_ON_START:
            submission_grading.with_db_retry(
                submission_grading.exercises_measure_unmeasured
            )

    threading.Thread(target=start, name="start-grading", daemon=True).start()
    if settings.GRADER_PEER_CHECK_SECONDS:
        threading.Thread(
            target=_watch_peers,
            args=(settings.GRADER_PEER_CHECK_SECONDS,),
            name="watch-peers",
            daemon=True,
        ).start()


def _watch_peers(every: float) -> None:
    """Take back, every few seconds, the grades a dead worker of this host
    held: killed with -9 it cannot say so, and waiting for its restart (a
    supervisor's delay, then its boot) kept its learners 30-45 s from a
    verdict under load. One cheap query on an index; a database away only
    skips a round."""
    import time

    from django.db import close_old_connections

    from grader import submission_grading, tasks

    while True:
        time.sleep(every)
        try:
            if submission_grading.submissions_requeue_abandoned(local_only=True):
                tasks.wake()
        except Exception:  # noqa: BLE001 - the next round tries again
            log.warning("watching for dead workers failed", exc_info=True)
        finally:
            close_old_connections()
