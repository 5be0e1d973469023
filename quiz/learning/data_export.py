"""Everything the service holds about a learner's own study, as JSON data.

The learner downloads it from their progress page (GDPR-style access to
their data): reads, answers, review cards with their ratings, and the
submissions the grader reports through quiz.learning.exercise_progress.
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from quiz.learning.exercise_progress import exercise_progress
from quiz.learning.models import LessonRead, QuestionAttempt, ReviewCard


def iso_or_none(value: dt.datetime | None) -> str | None:
    """A timestamp as the export writes it (None stays None)."""
    return value.isoformat() if value else None


def _card_target(card: ReviewCard) -> dict:
    if card.follow_up_id:
        return {
            "follow_up": card.follow_up.question,
            "lesson": card.follow_up.lesson.slug,
        }
    return {"question": card.question.prompt, "lesson": card.question.lesson.slug}


def learner_export(*, user) -> dict:
    """Everything the service holds about the learner's own study, as JSON data."""
    reads = LessonRead.objects.filter(user=user).select_related("lesson")
    attempts = QuestionAttempt.objects.filter(user=user).select_related(
        "question__lesson"
    )
    cards = (
        ReviewCard.objects.filter(user=user)
        .select_related("follow_up__lesson", "question__lesson")
        .prefetch_related("logs")
    )
    exercises = exercise_progress()
    return {
        "user": {"username": user.get_username(), "email": user.email},
        "exported_at": timezone.now().isoformat(),
        "lesson_reads": [
            {
                "lesson": r.lesson.slug,
                "first_read_at": iso_or_none(r.first_read_at),
                "last_read_at": iso_or_none(r.last_read_at),
            }
            for r in reads
        ],
        "question_attempts": [
            {
                "lesson": a.question.lesson.slug,
                "question": a.question.prompt,
                "answer": a.answer,
                "correct": a.correct,
                "created_at": iso_or_none(a.created_at),
            }
            for a in attempts
        ],
        "review_cards": [
            {
                **_card_target(c),
                "reason": c.reason,
                "due": iso_or_none(c.due),
                "state": c.state,
                "reviews": [
                    {"rating": log.rating, "reviewed_at": iso_or_none(log.reviewed_at)}
                    for log in c.logs.all()
                ],
            }
            for c in cards
        ],
        "submissions": exercises.export_rows(user=user) if exercises else [],
    }
