"""Project configuration; importing it makes the Celery app available to Django.

Every process of the service imports this first (manage.py through its
settings, gunicorn through config.wsgi, Celery through `-A config`), so this
is where a process starts collecting garbage rarely (grading_engine.gc_policy);
web and worker processes go back to the usual pace once they have started.
"""

from grading_engine import gc_policy

gc_policy.while_starting()

from config.celery import app as celery_app  # noqa: E402

__all__ = ["celery_app"]
