"""A learner's quizzes on their home page: open now or upcoming.

Registered into quiz.learning.home_panels by quiz.teaching.hooks (learning
cannot import teaching). Only quizzes of cohorts the learner is in, not
archived, whose window (a later close granted to the learner included)
has not ended.
"""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import timezone

from quiz.teaching.quizzes.models import Quiz, QuizAccommodation, QuizAttempt


def learner_quizzes(*, user, now=None) -> list[dict]:
    now = now or timezone.now()
    quizzes = list(
        Quiz.objects.filter(
            cohort__memberships__user=user, archived_at__isnull=True
        ).select_related("cohort")
    )
    if not quizzes:
        return []
    later = dict(
        QuizAccommodation.objects.filter(
            learner=user, quiz__in=quizzes, closes_at__isnull=False
        ).values_list("quiz_id", "closes_at")
    )
    counts = {
        row["quiz"]: row
        for row in QuizAttempt.objects.filter(
            learner=user, preview=False, quiz__in=quizzes
        )
        .values("quiz")
        .annotate(
            used=Count("id"),
            running=Count(
                "id",
                filter=Q(state=QuizAttempt.State.IN_PROGRESS, deadline__gt=now),
            ),
        )
    }
    rows = []
    for quiz in quizzes:
        closes_at = max(quiz.closes_at, later.get(quiz.pk) or quiz.closes_at)
        if closes_at <= now:
            continue
        count = counts.get(quiz.pk, {})
        rows.append(
            {
                "quiz": quiz,
                "closes_at": closes_at,
                "upcoming": now < quiz.opens_at,
                "used": count.get("used", 0),
                "in_progress": bool(count.get("running")),
            }
        )
    rows.sort(
        key=lambda r: (
            r["upcoming"],
            r["quiz"].opens_at if r["upcoming"] else r["closes_at"],
            r["quiz"].pk,
        )
    )
    return rows


def quizzes_panel(*, user) -> dict | None:
    """The home page's "Your quizzes", or None for a learner without any."""
    rows = learner_quizzes(user=user)
    if not rows:
        return None
    return {"template": "quiz/_quizzes_panel.html", "quizzes": rows}
