"""Who hears that a learner's graded work changed, whatever the layer.

A verdict (grader), a first self-check answer (learning), an override or an
extension (teaching) can each change a learner's assignment scores. Layers
above them (an LMS that receives grades) register a listener
`(user_ids: list[int]) -> None` from their AppConfig.ready(); it runs once the
change commits, so it never sees a row that a rollback takes back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from django.db import transaction

log = logging.getLogger(__name__)
_listeners: list[Callable[[list[int]], None]] = []


def score_listener_register(listener: Callable[[list[int]], None]) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def scores_changed(user_ids: Iterable[int]) -> None:
    """Tell every listener, after commit, that these learners' work changed."""
    ids = sorted({int(i) for i in user_ids})
    if not ids or not _listeners:
        return

    def notify() -> None:
        for listener in _listeners:
            try:
                listener(ids)
            except Exception:  # a listener's failure must not fail a grade
                log.exception("score listener %r failed", listener)

    transaction.on_commit(notify)
