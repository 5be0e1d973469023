"""A receiver of learner_scores_changed for the length of a test."""

from __future__ import annotations

import contextlib

from quiz.core.score_events import learner_scores_changed


@contextlib.contextmanager
def receiving(receiver, uid: str):
    learner_scores_changed.connect(receiver, dispatch_uid=uid, weak=False)
    try:
        yield
    finally:
        learner_scores_changed.disconnect(dispatch_uid=uid)
