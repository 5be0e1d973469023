"""A learner's quizzes: "Your quizzes" on their home page, and the quizzes of
"My grades" on their progress page (teaching.assignments.learner_assignments).

A panel of quiz.learning.panels, named in settings.HOME_PANELS (learning
cannot import teaching). Only quizzes of cohorts the learner is in, and not
archived. The home page lists those open or upcoming, then those that closed
for the learner within the last RECENT (a closed quiz stays, so its results
can be found); My grades lists every one.

A score shows only once the quiz's feedback policy releases it
(policy.scores_released, the gradebook's rule); until then words say when it
will, never a date: the only close a learner reads is their own
(policy.closing_time with their accommodation), never policy.last_close,
which may be another learner's accommodation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from teaching.quizzes.models import Quiz, QuizAccommodation, QuizAttempt
from teaching.quizzes.policy import (
    attempts_allowed,
    closing_time,
    scores_released,
)
from teaching.quizzes.results import combine

RECENT = timedelta(days=30)  # how long a closed quiz stays on the home page

# Where a score is held back, when it will show (never a date).
HELD_WORDS = {
    Quiz.Feedback.AFTER_SUBMIT: (
        "results once you have used your attempts or the quiz has closed for you"
    ),
    Quiz.Feedback.AFTER_CLOSE: "results when the quiz has closed for everyone",
}


@dataclass(frozen=True)
class QuizStanding:
    """One learner and one quiz: the window, the attempts, the released score."""

    quiz: Quiz
    now: datetime
    closes_at: datetime  # the learner's own close (their accommodation's)
    allowed: int  # attempts, their extra ones included
    used: int  # attempts started (previews never)
    submitted: int
    in_progress: bool  # an attempt running now
    score: float | None  # 0-1, the quiz's rule; None until released

    @property
    def upcoming(self) -> bool:
        return self.now < self.quiz.opens_at

    @property
    def closed(self) -> bool:
        return not self.in_progress and self.now >= self.closes_at

    @property
    def phase(self) -> str:
        if self.upcoming:
            return "upcoming"
        return "closed" if self.closed else "open"

    @property
    def held(self) -> bool:
        """Submitted, with the score not yet released."""
        return bool(self.submitted) and self.score is None

    @property
    def held_words(self) -> str:
        return HELD_WORDS.get(self.quiz.feedback, "") if self.held else ""

    @property
    def recent(self) -> bool:
        """Open, upcoming, or closed for the learner within RECENT."""
        return not self.closed or self.now - self.closes_at <= RECENT


def _order(standing: QuizStanding):
    """Open (closing soonest first), upcoming (opening soonest), then closed
    (most recently closed first)."""
    rank = {"open": 0, "upcoming": 1, "closed": 2}[standing.phase]
    if standing.phase == "open":
        moment = standing.closes_at.timestamp()
    elif standing.phase == "upcoming":
        moment = standing.quiz.opens_at.timestamp()
    else:
        moment = -standing.closes_at.timestamp()
    return (rank, moment, standing.quiz.pk)


def quiz_standings(*, user, quizzes=None, now=None) -> list[QuizStanding]:
    """Each quiz's standing for `user`, in the order the pages list them.

    `quizzes` defaults to every quiz of the learner's cohorts that is not
    archived; a caller may pass others (an assignment's quiz items).
    """
    now = now or timezone.now()
    if quizzes is None:
        quizzes = (
            Quiz.objects.filter(
                cohort__memberships__user=user, archived_at__isnull=True
            )
            .select_related("cohort")
            .distinct()
        )
    quizzes = list({q.pk: q for q in quizzes}.values())
    if not quizzes:
        return []
    accommodations = {
        a.quiz_id: a
        for a in QuizAccommodation.objects.filter(learner=user, quiz__in=quizzes)
    }
    attempts: dict[int, list[dict]] = {}
    for row in (
        QuizAttempt.objects.filter(learner=user, preview=False, quiz__in=quizzes)
        .order_by("number", "pk")
        .values("quiz_id", "state", "deadline", "score")
    ):
        attempts.setdefault(row["quiz_id"], []).append(row)
    released = scores_released(quizzes, [user.pk], now)
    standings = []
    for quiz in quizzes:
        accommodation = accommodations.get(quiz.pk)
        mine = attempts.get(quiz.pk, [])
        submitted = [a for a in mine if a["state"] == QuizAttempt.State.SUBMITTED]
        score = None
        if submitted and (user.pk, quiz.pk) in released:
            score = combine(quiz, [a["score"] or 0.0 for a in submitted])
        standings.append(
            QuizStanding(
                quiz=quiz,
                now=now,
                closes_at=closing_time(quiz, accommodation),
                allowed=attempts_allowed(quiz, accommodation),
                used=len(mine),
                submitted=len(submitted),
                in_progress=any(
                    a["state"] == QuizAttempt.State.IN_PROGRESS and a["deadline"] > now
                    for a in mine
                ),
                score=score,
            )
        )
    standings.sort(key=_order)
    return standings


def quizzes_panel(*, user) -> dict | None:
    """The home page's "Your quizzes", or None for a learner without any:
    open, upcoming, then recently closed; all of them are on My grades."""
    standings = quiz_standings(user=user)
    if not standings:
        return None
    shown = [s for s in standings if s.recent]
    return {
        "template": "teaching/_quizzes_panel.html",
        "quizzes": shown,
        "older": len(standings) - len(shown),
        "recent_days": RECENT.days,
    }
