"""When a quiz's right answers and checks may be shown: its feedback policy."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Max

from quiz.teaching.quizzes.models import Quiz, QuizAccommodation, QuizAttempt


def last_close(quiz: Quiz) -> datetime:
    """When the last learner's window closes (accommodations included)."""
    latest = QuizAccommodation.objects.filter(quiz=quiz).aggregate(m=Max("closes_at"))
    return max(filter(None, [quiz.closes_at, latest["m"]]))


def feedback_open(attempt: QuizAttempt, now: datetime) -> bool:
    """May this attempt's right answers and explanations be shown now?"""
    if attempt.preview:
        return True
    policy = attempt.quiz.feedback
    if policy == Quiz.Feedback.AFTER_CLOSE:
        submitted = attempt.state == QuizAttempt.State.SUBMITTED
        return submitted and now >= last_close(attempt.quiz)
    if policy == Quiz.Feedback.AFTER_SUBMIT:
        return attempt.state == QuizAttempt.State.SUBMITTED
    return True  # immediate: per answered question (presenting.attempt_state)
