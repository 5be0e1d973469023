"""Regrading a quiz: every submitted attempt scored again by today's keys.

An instructor who fixes a question's answer or tolerance (or a template's
function) after learners sat the quiz runs this. Each attempt's old score
is kept in a QuizRegradeResult beside its new one, so the report lists
every score that changed and nothing is lost.
"""

from __future__ import annotations

from django.db import transaction

from quiz.core.audit import Action, audit_record
from quiz.core.score_events import scores_changed
from quiz.teaching.quizzes.bank import Bank
from quiz.teaching.quizzes.models import (
    Quiz,
    QuizAttempt,
    QuizRegrade,
    QuizRegradeResult,
)
from quiz.teaching.quizzes.scoring import apply_score, score_items
from quiz.teaching.quizzes.services import close_expired


def quiz_regrade(*, quiz: Quiz, actor) -> QuizRegrade:
    """Rescore every submitted attempt (previews too); one transaction.

    Attempts whose deadline passed are submitted first, so they count.
    """
    close_expired(quiz=quiz)
    with transaction.atomic():
        attempts = list(
            QuizAttempt.objects.select_for_update()
            .filter(quiz=quiz, state=QuizAttempt.State.SUBMITTED)
            .order_by("pk")
        )
        bank = Bank(item["ref"] for a in attempts for item in a.items)
        regrade = QuizRegrade.objects.create(
            quiz=quiz, requested_by=actor, total=len(attempts)
        )
        rows, learners = [], set()
        for attempt in attempts:
            old = (attempt.points, attempt.score, list(attempt.results))
            apply_score(attempt, score_items(attempt, bank))
            changed = old[2] != attempt.results or old[0] != attempt.points
            if changed:
                attempt.save(update_fields=["results", "points", "possible", "score"])
                if not attempt.preview:
                    learners.add(attempt.learner_id)
            rows.append(
                QuizRegradeResult(
                    regrade=regrade,
                    attempt=attempt,
                    old_points=old[0],
                    old_score=old[1],
                    old_results=old[2],
                    new_points=attempt.points,
                    new_score=attempt.score,
                    new_results=attempt.results,
                    changed=changed,
                )
            )
        QuizRegradeResult.objects.bulk_create(rows)
        regrade.changed = sum(r.changed for r in rows)
        regrade.save(update_fields=["changed"])
        audit_record(
            actor=actor,
            action=Action.UPDATE,
            instance=quiz,
            changes={"regraded": [None, f"{regrade.changed} of {regrade.total}"]},
        )
        scores_changed(learners)
    return regrade


def regrade_report(regrade: QuizRegrade) -> list[dict]:
    """Every score that changed: learner, attempt, before and after."""
    rows = (
        regrade.results.filter(changed=True)
        .select_related("attempt__learner")
        .order_by("attempt__learner__username", "attempt__number")
    )
    return [
        {
            "attempt": r.attempt_id,
            "learner": r.attempt.learner.username,
            "number": r.attempt.number,
            "preview": r.attempt.preview,
            "old_points": r.old_points,
            "new_points": r.new_points,
            "old_score": r.old_score,
            "new_score": r.new_score,
            "questions": [
                n
                for n, (a, b) in enumerate(
                    zip(r.old_results, r.new_results, strict=False), start=1
                )
                if a != b
            ],
        }
        for r in rows
    ]
