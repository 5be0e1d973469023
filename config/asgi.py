"""ASGI entry point (gunicorn -k uvicorn_worker.UvicornWorker config.asgi, or
uvicorn config.asgi:application): the submission event streams wait on the
event loop (grader.live, grader.stream_hub) instead of holding a thread."""

import os

from django.core.asgi import get_asgi_application
from grading_engine import gc_policy

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Every request's synchronous part runs in a thread of its own here: a pool
# bounds the database connections (config.database).
os.environ.setdefault("DATABASE_POOL", "8")
django_application = get_asgi_application()

from grader.stream_admission import StreamAdmission  # noqa: E402 - needs the settings

# A storm of reconnecting event streams waits its turn here, before any thread.
application = StreamAdmission(django_application)
gc_policy.started()  # the site is loaded: the usual pace from here
