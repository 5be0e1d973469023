"""Liveness of the pieces the service needs: database and broker."""

import redis
from django.conf import settings
from django.db import connection
from django.http import JsonResponse

from grader import events


def healthz(request):
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        checks["database"] = f"down: {exc.__class__.__name__}"
    if settings.CELERY_TASK_ALWAYS_EAGER:
        checks["broker"] = "not used (grading in-process)"
    else:
        try:
            events.client().ping()  # the process's pool: no connection per call
            checks["broker"] = "ok"
        except redis.RedisError as exc:
            checks["broker"] = f"down: {exc.__class__.__name__}"
    healthy = all(v == "ok" or v.startswith("not used") for v in checks.values())
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", **checks},
        status=200 if healthy else 503,
    )


def sandbox_health(request):
    """Which sandbox protections are active on this host (admins only)."""
    if not (request.user.is_authenticated and request.user.is_staff):
        return JsonResponse({"detail": "Admins only."}, status=403)
    from grading_engine.sandbox import probe_protections
    from grading_engine.sandbox.probe import REQUIRED, missing_required

    found = probe_protections()
    missing = missing_required(found)
    allowed = settings.GRADER_ALLOW_UNSAFE_SANDBOX
    return JsonResponse(
        {
            "status": "ok" if not missing else ("degraded" if allowed else "refusing"),
            "required": {name: found.get(name) is True for name in REQUIRED},
            "missing_required": missing,
            "unsafe_mode_allowed": allowed,
            "details": found,
        }
    )
