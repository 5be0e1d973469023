"""The local-check bundle of an exercise, whichever kind it is.

A built-in exercise's bundle is a file `make client` built with the learner
edition (grader.client_dist). An authored exercise has no harness module to
build from: its bundle is computed by running its reference and known
mistakes on its visible cases in the sandbox (grading_engine.authored), on
a worker, and kept in a table of its own (LocalCheck: reading exercises
never reads it) with the key of what it was built from (the declaration
and the engine), so an edit or an engine upgrade rebuilds it. It is built
when a version goes live, and by a task the first time a learner's client
asks for one that is missing.
"""

from __future__ import annotations

import hashlib
import logging

from django.db import transaction
from grading_engine import __version__ as ENGINE_VERSION
from grading_engine import authored

from grader import client_dist
from grader.authored import AUTHORED, author_runs, exercise_declaration
from grader.models import Exercise, LocalCheck

log = logging.getLogger(__name__)
BUILD_TASK = "grader.build_local_check"  # grader.tasks.build_local_check


def local_check_key(exercise: Exercise) -> str | None:
    """What an authored exercise's bundle is built from; None if it cannot be."""
    try:
        declaration = exercise_declaration(exercise)
    except authored.DeclarationError:
        return None
    digest = hashlib.sha256(f"{declaration.digest()}:{ENGINE_VERSION}".encode())
    return digest.hexdigest()


def exercise_local_check(*, exercise: Exercise) -> dict | None:
    """{"blob" or "path", "sha256", "bytes"} of the exercise's bundle, or
    None: not built (an authored one's build is then asked of a worker)."""
    if exercise.harness != AUTHORED:
        return client_dist.bundle(exercise.harness)
    key = local_check_key(exercise)
    if key is None:
        return None
    blob = (
        LocalCheck.objects.filter(exercise=exercise, key=key)
        .values_list("blob", flat=True)
        .first()
    )
    if blob is not None:
        blob = bytes(blob)
        return {
            "blob": blob,
            "sha256": hashlib.sha256(blob).hexdigest(),
            "bytes": len(blob),
        }
    if _first_to_ask(exercise.pk, key):
        _ask_a_worker(exercise.pk)
    return None


def _ask_a_worker(exercise_id: int) -> None:
    """Queue grader.build_local_check (by name: the tasks module imports
    this one); a broker away only delays it, the next request asks again."""
    from celery import current_app
    from django.conf import settings

    try:
        if settings.CELERY_TASK_ALWAYS_EAGER:  # no worker: built here, cold
            current_app.tasks[BUILD_TASK].apply(args=[exercise_id])
            return
        current_app.send_task(
            BUILD_TASK, args=[exercise_id], queue=settings.CELERY_TASK_DEFAULT_QUEUE
        )
    except Exception as exc:  # noqa: BLE001 - the learner grades on the server
        log.warning("local-check build not sent: %s", exc)


def _first_to_ask(exercise_id: int, key: str) -> bool:
    """One build request per exercise and content every few minutes, however
    many clients ask (a cache outage asks again: the build is idempotent)."""
    from django.core.cache import cache

    try:
        return cache.add(f"local-check-asked:{exercise_id}:{key}", 1, timeout=300)
    except Exception:  # noqa: BLE001 - Redis away: ask anyway
        return True


def local_check_build(*, exercise_id: int, runner=None) -> bool:
    """Build and keep an authored exercise's bundle if it is missing or
    stale; whether one is kept now. Idempotent: a second call finds it."""
    from grader.process_runner import runner_get

    exercise = Exercise.objects.filter(pk=exercise_id).first()
    if exercise is None or exercise.harness != AUTHORED:
        return False  # deleted, or no longer authored, since it was asked for
    key = local_check_key(exercise)
    if key is None:
        return False
    if LocalCheck.objects.filter(exercise=exercise, key=key).exists():
        return True
    run = author_runs(runner or runner_get())
    declaration = exercise_declaration(exercise)
    try:
        blob = authored.local_check(declaration, run, engine=ENGINE_VERSION)
    except authored.AuthoredError as exc:
        log.warning("no local check for %s: %s", exercise.slug, exc)
        return False
    with transaction.atomic():
        # Only for the content it was built from: a save meanwhile changed it.
        current = Exercise.objects.select_for_update().get(pk=exercise.pk)
        if local_check_key(current) != key:
            return False
        LocalCheck.objects.update_or_create(
            exercise=current, defaults={"key": key, "blob": blob}
        )
    return True
