"""/metrics in Prometheus's text format, and request latency per view.

The page's figures come from prometheus-client (never written by hand):
this process's own metrics (or, with PROMETHEUS_MULTIPROC_DIR, every
process of this host's gunicorn: deploy/gunicorn.conf.py sets it, so any
process answers for all), plus what the database says at scrape
time (queue depth per lane, LMS scores by state). Access: with METRICS_TOKEN
set, only `Authorization: Bearer <token>`; without it, only this host.
The proxy does not serve it (deploy/nginx.conf).
"""

from __future__ import annotations

import hmac
import os
import time

from django.conf import settings
from django.db.backends.signals import connection_created
from django.http import HttpResponse, JsonResponse
from prometheus_client import (
    CONTENT_TYPE_PLAIN_0_0_4,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

from grader.metrics import QueueCollector
from lms.metrics import ScoresCollector

REQUEST_SECONDS = Histogram(
    "course_request_seconds",
    "Time to a response's headers, per view (a stream's wait is not counted).",
    ["view", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
DB_QUERIES = Counter(
    "course_db_queries", "Database queries this process sent (all connections)."
)
LOCAL = {"127.0.0.1", "::1"}
# Every label value comes from a fixed set, so strangers cannot add series:
# a method outside these is "other", a path no route matches is one view.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"


def _count_query(execute, sql, params, many, context):
    DB_QUERIES.inc()
    return execute(sql, params, many, context)


def _counted(sender, connection, **kwargs) -> None:
    if _count_query not in connection.execute_wrappers:
        connection.execute_wrappers.append(_count_query)


connection_created.connect(_counted, dispatch_uid="course-db-queries")


def _allowed(request) -> bool:
    token = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())
    return request.META.get("REMOTE_ADDR") in LOCAL


def metrics_view(request):
    if not _allowed(request):
        return JsonResponse(
            {"detail": "Metrics need the token (METRICS_TOKEN) or this host."},
            status=403,
        )
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        own = CollectorRegistry()
        multiprocess.MultiProcessCollector(own)
    else:
        own = REGISTRY
    database = CollectorRegistry(auto_describe=False)
    database.register(QueueCollector())
    database.register(ScoresCollector())
    body = generate_latest(own) + generate_latest(database)
    return HttpResponse(body, content_type=CONTENT_TYPE_PLAIN_0_0_4)


class RequestMetricsMiddleware:
    """Observe each request's time to its response, labelled by view name."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        REQUEST_SECONDS.labels(
            view=view_label(request), method=method_label(request.method)
        ).observe(time.perf_counter() - started)
        return response


def method_label(method: str | None) -> str:
    return method if method in METHODS else "other"


def view_label(request) -> str:
    """The route's name (one per URL pattern), never anything from the path."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        return UNMATCHED
    return match.view_name or match._func_path
