"""Celery tasks: thin, JSON-only wrappers around services."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="grader.ping", acks_late=True, soft_time_limit=10, time_limit=15)
def ping(payload: dict) -> dict:
    """Echo `payload` with the worker's pid: proves a round trip through the broker."""
    import os

    return {"echo": payload, "worker_pid": os.getpid()}
