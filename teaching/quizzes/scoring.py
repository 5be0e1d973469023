"""Scoring an attempt: each item's fraction right, and the points it makes.

Choice and numeric items are scored by today's keys (so a regrade sees a
fix) with this quiz's own question changes applied (changes.py: a new key
or tolerance, full credit, or dropped: None, out of the total); a code
item by its grader's verdict, which may arrive after the attempt is
submitted: `code_verdicts`, hearing quiz.core.score_events'
learner_scores_changed, rescores then. An instructor's override of one
question's score wins over all of these except a drop, so a regrade keeps
it.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F, FloatField, Q, Value
from django.db.models.functions import Coalesce

from grader.models import Submission
from quiz.core.score_events import scores_changed
from teaching.quizzes.bank import Bank, is_right
from teaching.quizzes.changes import changed, quiz_changes
from teaching.quizzes.code import code_rows, is_code, row_fraction
from teaching.quizzes.models import (
    QuizAttempt,
    QuizCodeAnswer,
    QuizItemOverride,
    QuizQuestionChange,
)

Change = QuizQuestionChange.Action


def attempt_overrides(attempt: QuizAttempt) -> dict[int, QuizItemOverride]:
    return {o.item: o for o in QuizItemOverride.objects.filter(attempt=attempt)}


def score_items(
    attempt: QuizAttempt,
    bank: Bank | None = None,
    codes: dict | None = None,
    *,
    changes: dict | None = None,
    overrides: dict | None = None,
) -> list[float | None]:
    """Each item's fraction right, by the current keys (what a regrade re-runs).

    A code question counts its grader's verdict (0 until it arrives); a
    dropped question is None (it leaves the total).
    """
    bank = bank or Bank(item["ref"] for item in attempt.items)
    codes = code_rows(attempt) if codes is None else codes
    changes = quiz_changes(attempt.quiz_id) if changes is None else changes
    overrides = attempt_overrides(attempt) if overrides is None else overrides
    fractions: list[float | None] = []
    for n, item in enumerate(attempt.items, start=1):
        change = changes.get(item["ref"])
        if change is not None and change.action == Change.DROP:
            fractions.append(None)
            continue
        if n in overrides:
            fractions.append(overrides[n].fraction)
            continue
        if change is not None and change.action == Change.FULL_CREDIT:
            fractions.append(1.0)
            continue
        if is_code(item):
            fractions.append(row_fraction(codes.get(n)))
            continue
        if not bank.has(item["ref"]):
            fractions.append(0.0)  # a question deleted since: no credit, no crash
            continue
        drawn = changed(bank.draw(item["ref"], item["seed"]), change)
        value = (attempt.answers.get(str(n)) or {}).get("value")
        if item["order"] and isinstance(value, int) and value < len(item["order"]):
            value = item["order"][value]  # the shown position -> the stored option
        fractions.append(1.0 if is_right(drawn, value) else 0.0)
    return fractions


def counted_possible(attempt: QuizAttempt, fractions: list[float | None]) -> float:
    """The points the attempt is out of: a dropped question's leave the total."""
    return sum(
        item["points"]
        for f, item in zip(fractions, attempt.items, strict=True)
        if f is not None
    )


def apply_score(attempt: QuizAttempt, fractions: list[float | None]) -> None:
    attempt.results = fractions
    attempt.possible = counted_possible(attempt, fractions)
    attempt.points = sum(
        f * item["points"]
        for f, item in zip(fractions, attempt.items, strict=True)
        if f is not None
    )
    attempt.score = attempt.points / attempt.possible if attempt.possible else 0.0


def code_verdicts_heard(sender, *, user_ids: list[int], **kwargs) -> None:
    """Receiver of learner_scores_changed (connected in TeachingConfig.ready())."""
    code_verdicts(user_ids)


def code_verdicts(user_ids: list[int]) -> None:
    """Score listener: attempts whose code's verdict came or changed are rescored."""
    changed = (
        QuizCodeAnswer.objects.filter(
            attempt__learner_id__in=user_ids,
            submission__status__in=Submission.TERMINAL,
        )
        .annotate(
            now_=Coalesce("submission__score", Value(0.0), output_field=FloatField())
        )
        .filter(Q(fraction__isnull=True) | ~Q(fraction=F("now_")))
    )
    attempt_ids = sorted(set(changed.values_list("attempt_id", flat=True)))
    learners = set()
    for attempt_id in attempt_ids:
        with transaction.atomic():
            attempt = QuizAttempt.objects.select_for_update().get(pk=attempt_id)
            rows = code_rows(attempt)
            for row in rows.values():
                fraction = row_fraction(row)
                if row.fraction != fraction:
                    row.fraction = fraction
                    row.save(update_fields=["fraction"])
            if attempt.state == QuizAttempt.State.SUBMITTED:
                before = attempt.points
                apply_score(attempt, score_items(attempt, codes=rows))
                attempt.save(update_fields=["results", "points", "possible", "score"])
                if not attempt.preview and attempt.points != before:
                    learners.add(attempt.learner_id)
    if learners:
        scores_changed(learners)
