"""Stopping the grades that were cancelled, in whichever worker runs them.

A learner's cancel (grader.services.submission_cancel) is one conditional
UPDATE: the row becomes `cancelled`, so a late verdict cannot overwrite it
and the learner's grading slot is free at once. The grade itself is stopped
here: each worker process keeps a cancel token per running grade, hears
cancels on Redis (grader.events) the moment they happen, and checks the
database every second for any it missed (Redis down, a message lost), so a
cancelled or re-queued row never keeps a slot. The same check stops a slow
grade (a likely loop) whose learner has sent another submission, to be set
aside (grader.dispatch): one learner never holds two slots, so their next
answer would otherwise wait for their loop's whole budget at low priority.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager

import redis
from django.db import DatabaseError, connection
from grading_engine.runner import CancelToken

from grader import events
from grader.models import Submission

log = logging.getLogger(__name__)
CHECK_EVERY_SECONDS = 1.0


class RunningGrades:
    """The cancel tokens of this process's running grades, and their watcher."""

    def __init__(self):
        self._lock = threading.Lock()
        self._tokens: dict[str, CancelToken] = {}
        self._yielding: dict[str, tuple[int, threading.Event]] = {}
        self._watcher: threading.Thread | None = None

    @contextmanager
    def watch(self, submission_id):
        """A token that is set if this submission is cancelled while it runs."""
        key = str(submission_id)
        token = CancelToken()
        with self._lock:
            self._tokens[key] = token
            if self._watcher is None:
                self._watcher = threading.Thread(
                    target=self._watch_forever, name="cancel-watcher", daemon=True
                )
                self._watcher.start()
        try:
            # A cancel may have landed between the claim and now. A database
            # that is down says nothing: the watcher looks again within a second.
            try:
                if not Submission.objects.filter(pk=key, status="running").exists():
                    token.set()
            except DatabaseError as exc:
                log.warning("cannot check for a cancel yet: %s", exc)
            yield token
        finally:
            with self._lock:
                self._tokens.pop(key, None)
                self._yielding.pop(key, None)
            token.close()

    def cancel(self, submission_id) -> bool:
        with self._lock:
            token = self._tokens.get(str(submission_id))
            if token is not None:
                token.set()
        return token is not None

    def yield_to_own(self, submission_id, *, user_id: int, set_aside) -> None:
        """Stop this running grade, setting `set_aside`, once its learner
        has another submission queued (checked with the cancels)."""
        with self._lock:
            if str(submission_id) in self._tokens:
                self._yielding[str(submission_id)] = (user_id, set_aside)

    def running(self) -> list[str]:
        with self._lock:
            return list(self._tokens)

    def _watch_forever(self) -> None:
        pubsub = None
        checked = 0.0
        while True:
            try:
                if pubsub is None:
                    pubsub = events.subscriber(events.cancel_channel())
                message = pubsub.get_message(timeout=CHECK_EVERY_SECONDS)
                if message and message.get("type") == "message":
                    self.cancel(message["data"].decode())
            except (redis.RedisError, OSError):
                pubsub = None
                time.sleep(CHECK_EVERY_SECONDS)
            if time.monotonic() - checked >= CHECK_EVERY_SECONDS:
                checked = time.monotonic()
                self._check_database()

    def _check_database(self) -> None:
        ids = self.running()
        if not ids:
            return
        with self._lock:
            yielding = dict(self._yielding)
        try:
            gone = Submission.objects.filter(pk__in=ids).exclude(status="running")
            for pk in gone.values_list("pk", flat=True):
                self.cancel(pk)
            if yielding:
                waiting = set(
                    Submission.objects.filter(
                        user_id__in={user for user, _ in yielding.values()},
                        status="queued",
                        set_aside=False,
                    ).values_list("user_id", flat=True)
                )
                for key, (user, set_aside) in yielding.items():
                    if user in waiting:
                        set_aside.set()
                        self.cancel(key)
        except DatabaseError as exc:
            log.warning("cancel watcher cannot read the database: %s", exc)
        finally:
            connection.close()  # hold no connection between checks


running_grades = RunningGrades()
