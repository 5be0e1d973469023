"""When a quiz's feedback (scores, right answers, explanations, checks) may show.

One rule for every surface: the attempt page and API, the home page, the
gradebook and its exports, the LMS. A quiz's feedback policy decides:

- `immediate`: each answer's verdict once it is checked (a checked answer
  is final), the attempt's score once it is submitted. Practice: nothing
  is held back.
- `after_submit` (feedback per attempt): once the learner can no longer
  answer the quiz: no attempt of theirs running, and no attempt left or
  their own window closed. A learner with an attempt left who read the
  keys of the first would carry them into the second.
- `after_close`: once nobody can answer the quiz any more: its last close,
  accommodations included, has passed. Closing early ends the running
  attempts at the new close (services.quiz_update), so no attempt outlives
  it; a reopen for one learner holds everyone's feedback again until that
  learner's new close.

An instructor's preview shows everything. `last_close` quotes one learner's
accommodation, so it is never shown to learners.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db.models import Count, Max, Q

from teaching.quizzes.models import Quiz, QuizAccommodation, QuizAttempt

HELD_BACK = (Quiz.Feedback.AFTER_SUBMIT, Quiz.Feedback.AFTER_CLOSE)


def held_back(quiz: Quiz) -> bool:
    """Does this quiz keep its keys until after an attempt (not practice)?"""
    return quiz.feedback in HELD_BACK


def closing_time(quiz: Quiz, accommodation: QuizAccommodation | None) -> datetime:
    """When `quiz` closes for a learner with `accommodation` (or None)."""
    if accommodation and accommodation.closes_at:
        return max(accommodation.closes_at, quiz.closes_at)
    return quiz.closes_at


def attempts_allowed(quiz: Quiz, accommodation: QuizAccommodation | None) -> int:
    extra = accommodation.extra_attempts if accommodation else 0
    return quiz.attempts_allowed + extra


def last_close(quiz: Quiz) -> datetime:
    """When the last learner's window closes (accommodations included)."""
    latest = QuizAccommodation.objects.filter(quiz=quiz).aggregate(m=Max("closes_at"))
    return max(filter(None, [quiz.closes_at, latest["m"]]))


def quiz_answerable(quiz: Quiz, now: datetime) -> bool:
    """May anyone still answer `quiz`: before its last close, or an attempt live?"""
    if now < last_close(quiz):
        return True
    return QuizAttempt.objects.filter(
        quiz=quiz, preview=False, state=QuizAttempt.State.IN_PROGRESS, deadline__gt=now
    ).exists()


def _can_answer(
    quiz: Quiz, accommodation, *, used: int, running: int, now: datetime
) -> bool:
    if running:
        return True
    if now >= closing_time(quiz, accommodation):
        return False
    return used < attempts_allowed(quiz, accommodation)


def learner_can_answer(quiz: Quiz, learner_id: int, now: datetime) -> bool:
    """May this learner still answer `quiz`: an attempt running, or one to start?"""
    accommodation = QuizAccommodation.objects.filter(
        quiz=quiz, learner_id=learner_id
    ).first()
    counts = QuizAttempt.objects.filter(
        quiz=quiz, learner_id=learner_id, preview=False
    ).aggregate(
        used=Count("pk"),
        running=Count(
            "pk", filter=Q(state=QuizAttempt.State.IN_PROGRESS, deadline__gt=now)
        ),
    )
    return _can_answer(
        quiz, accommodation, used=counts["used"], running=counts["running"], now=now
    )


def feedback_open(attempt: QuizAttempt, now: datetime) -> bool:
    """May this attempt's score, right answers and explanations be shown now?

    With immediate feedback, the answered questions' verdicts show during
    the attempt (presenting.attempt_state) and the score once submitted.
    """
    if attempt.preview:
        return True
    quiz = attempt.quiz
    if quiz.feedback == Quiz.Feedback.IMMEDIATE:
        return True
    if attempt.state != QuizAttempt.State.SUBMITTED:
        return False
    if quiz.feedback == Quiz.Feedback.AFTER_CLOSE:
        return not quiz_answerable(quiz, now)
    return not learner_can_answer(quiz, attempt.learner_id, now)


def scores_released(
    quizzes: Iterable[Quiz], learner_ids: Iterable[int], now: datetime
) -> set[tuple[int, int]]:
    """The (learner id, quiz id) pairs whose submitted scores may show now.

    The batch form of feedback_open, for the gradebook, the home page and
    the LMS: five queries whatever the number of quizzes and learners.
    """
    quizzes = list(quizzes)
    learner_ids = list(learner_ids)
    if not quizzes or not learner_ids:
        return set()
    ids = [q.pk for q in quizzes]
    accommodations = {
        (a.learner_id, a.quiz_id): a
        for a in QuizAccommodation.objects.filter(
            quiz_id__in=ids, learner_id__in=learner_ids
        )
    }
    latest = defaultdict(lambda: None)
    for quiz_id, moment in (
        QuizAccommodation.objects.filter(quiz_id__in=ids, closes_at__isnull=False)
        .values("quiz_id")
        .annotate(m=Max("closes_at"))
        .values_list("quiz_id", "m")
    ):
        latest[quiz_id] = moment
    counts = {
        (row["learner_id"], row["quiz_id"]): row
        for row in QuizAttempt.objects.filter(
            quiz_id__in=ids, learner_id__in=learner_ids, preview=False
        )
        .values("learner_id", "quiz_id")
        .annotate(
            used=Count("pk"),
            running=Count(
                "pk", filter=Q(state=QuizAttempt.State.IN_PROGRESS, deadline__gt=now)
            ),
        )
    }
    live = set(
        QuizAttempt.objects.filter(
            quiz_id__in=ids,
            preview=False,
            state=QuizAttempt.State.IN_PROGRESS,
            deadline__gt=now,
        ).values_list("quiz_id", flat=True)
    )
    released = set()
    for quiz in quizzes:
        if quiz.feedback == Quiz.Feedback.AFTER_CLOSE:
            closes = max(filter(None, [quiz.closes_at, latest[quiz.pk]]))
            if now >= closes and quiz.pk not in live:
                released.update((learner, quiz.pk) for learner in learner_ids)
            continue
        for learner in learner_ids:
            if quiz.feedback == Quiz.Feedback.AFTER_SUBMIT:
                row = counts.get((learner, quiz.pk), {})
                if _can_answer(
                    quiz,
                    accommodations.get((learner, quiz.pk)),
                    used=row.get("used", 0),
                    running=row.get("running", 0),
                    now=now,
                ):
                    continue
            released.add((learner, quiz.pk))
    return released
