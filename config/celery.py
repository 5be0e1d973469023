"""The Celery app: JSON only, late acks, time limits (see DESIGN.md)."""

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("course")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _warm_the_grader(**kwargs) -> None:
    """Start warming this worker process's sandbox pool before the first job.

    In a thread: Celery kills a pool process whose init takes more than a few
    seconds, and warming (torch, GPT-2 small) takes longer. The first job
    waits for it on the runner lock.
    """
    from django.conf import settings

    if settings.GRADER_RUNNER == "pool" and not settings.CELERY_TASK_ALWAYS_EAGER:
        import threading

        from grader.process_runner import runner_get

        threading.Thread(target=runner_get, name="warm-grader", daemon=True).start()
