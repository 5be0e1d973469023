"""Regrading a quiz: every submitted attempt scored again, old scores kept.

Two ways in. An instructor who fixed a question's answer or tolerance (or
a template's function) for every cohort reruns the scoring
(`quiz_regrade`); one who fixes a question for this quiz only saves a
QuizQuestionChange (a new key or tolerance, full credit, dropped) with a
dry run first (`question_change_preview`, then `question_change_set`).
Either way each attempt's old score is kept in a QuizRegradeResult beside
its new one, so the report lists every score that changed and nothing is
lost; an instructor's override of one question stays (scoring applies it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db import transaction
from grading_engine.quiz_bank.numbers import NotANumber, parse_number

from quiz.core.audit import Action, audit_record
from quiz.core.score_events import scores_changed
from teaching.quizzes.bank import Bank, Drawn, pool_refs
from teaching.quizzes.changes import change_words, changed, quiz_changes
from teaching.quizzes.models import (
    Quiz,
    QuizAttempt,
    QuizItemOverride,
    QuizQuestionChange,
    QuizRegrade,
    QuizRegradeResult,
)
from teaching.quizzes.scoring import apply_score, score_items
from teaching.quizzes.services import close_expired

Action_ = QuizQuestionChange.Action
MAX_TOLERANCE = 1e15


class ChangeInvalid(ValueError):
    """The change cannot apply to this question; `field` names what to fix."""

    def __init__(self, message: str, *, field: str = "action"):
        super().__init__(message)
        self.field = field


def rescore(quiz: Quiz, *, changes: dict, lock: bool) -> list[tuple]:
    """Every submitted attempt scored again: (attempt, (old points, old score,
    old results)) each, the attempt holding its new score, not saved."""
    attempts = QuizAttempt.objects.filter(
        quiz=quiz, state=QuizAttempt.State.SUBMITTED
    ).order_by("pk")
    if lock:
        attempts = attempts.select_for_update(of=("self",))
    attempts = list(attempts.select_related("learner"))
    bank = Bank(item["ref"] for a in attempts for item in a.items)
    overrides: dict[int, dict] = {}
    for row in QuizItemOverride.objects.filter(attempt__quiz=quiz):
        overrides.setdefault(row.attempt_id, {})[row.item] = row
    out = []
    for attempt in attempts:
        old = (attempt.points, attempt.score, list(attempt.results))
        fractions = score_items(
            attempt, bank, changes=changes, overrides=overrides.get(attempt.pk, {})
        )
        apply_score(attempt, fractions)
        out.append((attempt, old))
    return out


def regrade_delta(attempt: QuizAttempt, old: tuple) -> dict:
    """One attempt's score before and after, as the reports show it."""
    return _delta_row(
        attempt, old, (attempt.points, attempt.score, attempt.results)
    ) | {"possible": attempt.possible}


def _delta_row(attempt: QuizAttempt, old: tuple, new: tuple) -> dict:
    return {
        "attempt": attempt.pk,
        "learner": attempt.learner.username,
        "number": attempt.number,
        "preview": attempt.preview,
        "old_points": old[0],
        "new_points": new[0],
        "old_score": old[1],
        "new_score": new[1],
        "questions": _moved(old[2], new[2]),
    }


def _moved(old: list, new: list) -> list[int]:
    return [
        n for n, (a, b) in enumerate(zip(old, new, strict=False), start=1) if a != b
    ]


def regrade_run(*, quiz: Quiz, actor, what: str = "") -> QuizRegrade:
    """Rescore every submitted attempt (previews too) in one transaction."""
    with transaction.atomic():
        regrade = QuizRegrade.objects.create(quiz=quiz, requested_by=actor, what=what)
        rows, learners = [], set()
        for attempt, old in rescore(quiz, changes=quiz_changes(quiz.pk), lock=True):
            moved = old[2] != attempt.results or old[0] != attempt.points
            if moved:
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
                    changed=moved,
                )
            )
        QuizRegradeResult.objects.bulk_create(rows)
        regrade.total = len(rows)
        regrade.changed = sum(r.changed for r in rows)
        regrade.save(update_fields=["total", "changed"])
        changes = {"regraded": [None, f"{regrade.changed} of {regrade.total}"]}
        if what:
            changes["what"] = [None, what]
        audit_record(actor=actor, action=Action.UPDATE, instance=quiz, changes=changes)
        scores_changed(learners)
    return regrade


def quiz_regrade(*, quiz: Quiz, actor) -> QuizRegrade:
    """Rescore every submitted attempt by today's keys (previews too).

    Attempts whose deadline passed are submitted first, so they count.
    """
    close_expired(quiz=quiz)
    return regrade_run(quiz=quiz, actor=actor)


def regrade_report(regrade: QuizRegrade) -> list[dict]:
    """Every score that changed: learner, attempt, before and after."""
    rows = (
        regrade.results.filter(changed=True)
        .select_related("attempt__learner")
        .order_by("attempt__learner__username", "attempt__number")
    )
    return [
        _delta_row(
            r.attempt,
            (r.old_points, r.old_score, r.old_results),
            (r.new_points, r.new_score, r.new_results),
        )
        for r in rows
    ]


# One question, for this quiz only --------------------------------------------


def quiz_questions(quiz: Quiz) -> list[dict]:
    """Every question the quiz's slots draw from, as an instructor regrades
    it: its key (a template: one sample), options, and this quiz's change."""
    refs = list(
        dict.fromkeys(ref for slot in quiz.slots.all() for ref in pool_refs(slot.pool))
    )
    bank = Bank(refs)
    changes = quiz_changes(quiz.pk)
    rows = []
    for ref in refs:
        if not bank.has(ref):
            continue
        drawn = bank.draw(ref, "sample:0")
        change = changes.get(ref)
        shown = changed(drawn, change)
        rows.append(
            {
                "ref": ref,
                "title": drawn.title,
                "kind": drawn.kind,
                "prompt": "" if ref.startswith("t:") else drawn.prompt,
                "varies": ref.startswith("t:"),
                "options": drawn.options,
                "correct": shown.correct,
                "answer": shown.answer_text(),
                "tolerance": shown.tolerance_text() if drawn.kind == "numeric" else "",
                "change": None
                if change is None
                else {
                    "action": change.action,
                    "words": change_words(change, shown),
                    "comment": change.comment,
                },
                "actions": [a for a in Action_.values if _allowed(ref, drawn, a)],
            }
        )
    return rows


def _allowed(ref: str, drawn: Drawn, action: str) -> bool:
    if action == Action_.KEY:
        return not ref.startswith("t:") and drawn.kind != "code"
    if action == Action_.TOLERANCE:
        return drawn.kind == "numeric"
    return True


@dataclass(frozen=True)
class ChangeRequest:
    ref: str
    action: str
    answer: object = None  # key: an option (its stored index) or a number
    absolute: float | None = None
    relative: float | None = None
    comment: str = ""


def _sample(ref: str) -> Drawn:
    """The question (a template: one variant; its kind and options are fixed)."""
    bank = Bank([ref])
    if not bank.has(ref):
        raise ChangeInvalid("That question no longer exists.", field="question")
    return bank.draw(ref, "sample:0")


def _checked(quiz: Quiz, request: ChangeRequest) -> tuple[QuizQuestionChange, Drawn]:
    """The change as stored (and the question), or ChangeInvalid naming the field."""
    refs = {ref for slot in quiz.slots.all() for ref in pool_refs(slot.pool)}
    if request.ref not in refs:
        shown = str(request.ref)
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        raise ChangeInvalid(
            f"{shown} is not a question of this quiz.", field="question"
        )
    if request.action not in Action_.values:
        raise ChangeInvalid(
            f"action is one of {', '.join(Action_.values)}.", field="action"
        )
    drawn = _sample(request.ref)
    row = QuizQuestionChange(
        quiz=quiz,
        ref=request.ref,
        action=request.action,
        comment=str(request.comment or "")[:2000],
    )
    if request.action == Action_.KEY:
        if request.ref.startswith("t:") or drawn.kind == "code":
            raise ChangeInvalid(
                "Each learner's numbers (and so key) differ for a template, and a "
                "code question is graded by its checks: change its tolerance, give "
                "full credit or drop it.",
                field="action",
            )
        if drawn.kind == "choice":
            option = request.answer
            text = option.strip() if isinstance(option, str) else ""
            if text.isascii() and text.isdigit():  # int() takes "²" too
                if len(text) > 6:  # no option, and int() refuses 4,301 digits
                    raise ChangeInvalid(
                        f"answer: no option {text[:20]}….", field="answer"
                    )
                option = int(text)
            if isinstance(option, bool) or not isinstance(option, int):
                raise ChangeInvalid("answer: pick the right option.", field="answer")
            if not 0 <= option < len(drawn.options):
                shown = str(option) if abs(option) < 10**20 else f"{str(option)[:20]}…"
                raise ChangeInvalid(f"answer: no option {shown}.", field="answer")
            row.answer = option
        else:
            try:
                number = parse_number(str(request.answer or "").strip()[:100])
            except NotANumber as exc:
                raise ChangeInvalid(f"answer: {exc}", field="answer") from None
            row.answer = str(request.answer).strip()
            if not math.isfinite(float(number)):
                raise ChangeInvalid("answer: a finite number.", field="answer")
    elif request.action == Action_.TOLERANCE:
        if drawn.kind != "numeric":
            raise ChangeInvalid(
                "Only a numeric question has a tolerance.", field="action"
            )
        for name, value in (
            ("absolute", request.absolute),
            ("relative", request.relative),
        ):
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
                or not 0 <= value <= MAX_TOLERANCE
            ):
                raise ChangeInvalid(
                    f"{name}: a number from 0 up (0.01 relative is 1%).", field=name
                )
        if request.absolute is None and request.relative is None:
            raise ChangeInvalid(
                "Give an absolute or a relative tolerance.", field="absolute"
            )
        row.tolerance_absolute = float(request.absolute or 0.0)
        row.tolerance_relative = float(request.relative or 0.0)
    return row, drawn


def question_change_preview(*, quiz: Quiz, request: ChangeRequest) -> list[dict]:
    """Dry run: whose scores would change, and by how much. Nothing is saved."""
    row, _drawn = _checked(quiz, request)
    changes = {**quiz_changes(quiz.pk), row.ref: row}
    return [
        regrade_delta(attempt, old)
        for attempt, old in rescore(quiz, changes=changes, lock=False)
        if attempt.points != old[0] or attempt.score != old[1]
    ]


def question_change_set(
    *, quiz: Quiz, request: ChangeRequest, actor, undo: bool = False
) -> QuizRegrade:
    """Save the change (or undo this question's change) and rescore every
    submitted attempt in one transaction; the report keeps the old scores."""
    with transaction.atomic():
        quiz = Quiz.objects.select_for_update().get(pk=quiz.pk)
        existing = QuizQuestionChange.objects.filter(quiz=quiz, ref=request.ref).first()
        if undo:
            if existing is None:
                raise ChangeInvalid(
                    "That question has no change to undo.", field="question"
                )
            drawn = _sample(request.ref)
            existing.delete()
            what = "change undone"
        else:
            row, drawn = _checked(quiz, request)
            if existing is not None:
                row.pk = existing.pk
            row.created_by = actor
            row.save()
            what = change_words(row, changed(drawn, row))
            if row.comment:
                what = f"{what} Why: {row.comment}"
        what = f"“{drawn.title}” ({request.ref}): {what}"[:300]
        return regrade_run(quiz=quiz, actor=actor, what=what)
