"""An instructor's score for one question of one attempt, with a comment.

Read a learner's attempt (presenting.attempt_state with review=True), then
set what one question counts: a marker accepting an answer the key missed,
or taking away credit given by mistake. Scoring applies the override after
the keys (scoring.score_items), so a later regrade keeps it; the attempt's
score changes at once, and the gradebook and the LMS follow through
scores_changed. Every change is audited.
"""

from __future__ import annotations

import math

from django.db import transaction

from quiz.core.audit import Action, audit_record
from quiz.core.score_events import scores_changed
from teaching.quizzes.models import QuizAttempt, QuizItemOverride
from teaching.quizzes.scoring import apply_score, score_items
from teaching.quizzes.services import QuizError

COMMENT_MAX = 2000


def item_override_set(
    *, attempt: QuizAttempt, item: int, points, comment: str, actor
) -> QuizAttempt:
    """Set question `item`'s points (None: back to the keys); the attempt
    rescored. QuizError naming the field for bad input."""
    if isinstance(item, bool) or not isinstance(item, int):
        raise QuizError("question is a question's number.", field="question")
    comment = str(comment or "").strip()
    with transaction.atomic():
        attempt = QuizAttempt.objects.select_for_update().get(pk=attempt.pk)
        if not 1 <= item <= len(attempt.items):
            raise QuizError(
                f"There is no question {item} in this attempt.", field="question"
            )
        if attempt.state != QuizAttempt.State.SUBMITTED:
            raise QuizError(
                "This attempt is still in progress: score it once it is submitted.",
                field="question",
            )
        worth = attempt.items[item - 1]["points"]
        existing = QuizItemOverride.objects.filter(attempt=attempt, item=item).first()
        before = None if existing is None else existing.fraction * worth
        if points is None:
            if existing is None:
                raise QuizError("This question has no score set.", field="points")
            existing.delete()
        else:
            if (
                isinstance(points, bool)
                or not isinstance(points, int | float)
                or not math.isfinite(points)
                or not 0 <= points <= worth
            ):
                raise QuizError(
                    f"points from 0 to {worth:g} (what the question is worth).",
                    field="points",
                )
            if not comment:
                raise QuizError(
                    "Say why (the learner reads it with the score).", field="comment"
                )
            if len(comment) > COMMENT_MAX:
                raise QuizError(
                    f"A comment of at most {COMMENT_MAX} characters.", field="comment"
                )
            QuizItemOverride.objects.update_or_create(
                attempt=attempt,
                item=item,
                defaults={
                    "fraction": points / worth if worth else 0.0,
                    "comment": comment,
                    "set_by": actor,
                },
            )
        old_points = attempt.points
        apply_score(attempt, score_items(attempt))
        attempt.save(update_fields=["results", "points", "possible", "score"])
        audit_record(
            actor=actor,
            action=Action.UPDATE,
            instance=attempt,
            changes={
                f"question {item} points": [before, points],
                "comment": [
                    existing.comment if existing else None,
                    comment if points is not None else None,
                ],
                "attempt points": [old_points, attempt.points],
            },
        )
        if not attempt.preview:
            scores_changed([attempt.learner_id])
    return attempt
