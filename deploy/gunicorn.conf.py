"""gunicorn's settings for the web service, as deployed (Dockerfile, compose)
and as the tests and benchmarks start it: uvicorn workers on config.asgi,
and metrics that every worker shares.

Each worker counts into files under PROMETHEUS_MULTIPROC_DIR, so whichever
process answers /metrics answers for all of them (config.metrics). Without
it, two scrapes of one host read two different processes. Its metric files
are removed when the server starts (old workers' counts would add up) and a
fresh one is made per server when none is given, so two servers on one
host never share one.
"""

import glob
import os
import tempfile

# uvicorn's worker, answering every request it has taken after SIGTERM and
# cutting open event streams 3 s after it so that they give their slots back
# (config/web_worker.py says why).
worker_class = "config.web_worker.StreamingUvicornWorker"
# On SIGTERM (a deploy, a restart) requests in flight get this long before
# the worker is killed (compose kills a container 10 s after SIGTERM anyway).
# The default, 30 s, kept a stopped process serving streams for their whole
# life; the worker now cuts them first, and their pages reconnect to another
# process.
graceful_timeout = 8

_given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
METRICS_DIR = _given or tempfile.mkdtemp(prefix="course-metrics-")
os.environ["PROMETHEUS_MULTIPROC_DIR"] = METRICS_DIR  # the workers inherit it


def on_starting(server):
    """Before any worker: start the counts from nothing (only the metric
    files go: the directory may be shared with other things)."""
    os.makedirs(METRICS_DIR, exist_ok=True)
    for path in glob.glob(os.path.join(METRICS_DIR, "*.db")):
        os.remove(path)


def child_exit(server, worker):
    """A worker's live gauges (its open streams) go with it."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
