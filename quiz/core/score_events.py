"""Who hears that a learner's graded work changed, whatever the layer.

A verdict (grader), a first self-check answer (learning), an override or an
extension (teaching) can each change a learner's assignment scores. That is
a fact the lower layer announces, so it is a signal: `learner_scores_changed`,
sent with `user_ids` (sorted, each once) once the change commits, so a
receiver never sees a row that a rollback takes back. Layers above (teaching
rescoring a quiz's code answers, an LMS that receives grades) connect to it
from their AppConfig.ready(), each with a dispatch_uid.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.dispatch import Signal

# Sent with sender=None and user_ids: list[int]; see scores_changed.
learner_scores_changed = Signal()


def scores_changed(user_ids: Iterable[int]) -> None:
    """Tell every receiver, after commit, that these learners' work changed."""
    ids = sorted({int(i) for i in user_ids})
    if not ids or not learner_scores_changed.has_listeners():
        return

    def notify() -> None:
        # Robust: a receiver that raises must not fail a grade. Django logs
        # its failure (logger django.dispatch, with the traceback), once.
        learner_scores_changed.send_robust(None, user_ids=ids)

    transaction.on_commit(notify)
