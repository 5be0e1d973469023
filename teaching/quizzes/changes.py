"""A question regraded for one quiz: its key or tolerance, full credit, drop.

The question itself (a lesson's self-check, a template, a quiz-only
question) is shared by every quiz and cohort, so an instructor's fix for
this quiz lives in a QuizQuestionChange and is applied wherever this quiz
reads a question: scoring (scoring.score_items) and what learners and
instructors see (presenting). Making one is regrading's job
(attempt_regrade.question_change_set, with its dry run).
"""

from __future__ import annotations

import dataclasses

from grading_engine.quiz_bank.numbers import parse_number

from teaching.quizzes.bank import Drawn
from teaching.quizzes.models import QuizQuestionChange

Action_ = QuizQuestionChange.Action


def quiz_changes(quiz_id: int) -> dict[str, QuizQuestionChange]:
    """This quiz's question changes, by ref."""
    return {c.ref: c for c in QuizQuestionChange.objects.filter(quiz_id=quiz_id)}


def _number(value):
    if isinstance(value, int | float):
        return value
    number = parse_number(str(value))
    return int(number) if number == number.to_integral_value() else float(number)


def changed(drawn: Drawn, change: QuizQuestionChange | None) -> Drawn:
    """The question as this quiz scores it: its key or tolerance replaced."""
    if change is None:
        return drawn
    if change.action == Action_.KEY:
        if drawn.kind == "choice":
            return dataclasses.replace(drawn, correct=int(change.answer))
        return dataclasses.replace(drawn, answer=_number(change.answer))
    if change.action == Action_.TOLERANCE:
        return dataclasses.replace(
            drawn,
            tolerance=(
                change.tolerance_absolute or 0.0,
                change.tolerance_relative or 0.0,
            ),
        )
    return drawn


def change_words(change: QuizQuestionChange | None, drawn: Drawn | None) -> str:
    """What the change did, for the learner's feedback and the reports."""
    if change is None:
        return ""
    if change.action == Action_.DROP:
        return "Dropped from this quiz: it counts for nobody."
    if change.action == Action_.FULL_CREDIT:
        return "Full credit for everyone on this question."
    if change.action == Action_.TOLERANCE and drawn is not None:
        return f"Regraded: answers {drawn.tolerance_text()} are right."
    if drawn is not None:
        return f"Regraded: the right answer is {drawn.answer_text()}."
    return "Regraded for this quiz."
