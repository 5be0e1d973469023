"""A learner's own assignments: their home page panel, "My grades" on their
progress page, an exercise's due date.

Named in the settings the layers below read (HOME_PANELS and
PROGRESS_PANELS for quiz.learning.panels, EXERCISE_NOTE_SOURCES for
grader.exercise_notes). Only assignments that have opened, are not archived,
and belong to a cohort the learner is in. A quiz item whose score its
feedback policy still holds back scores 0 in its assignment (scoring.py) and
says when its result will show instead of a figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.utils import timezone

from teaching.assignments.scoring import (
    ItemScore,
    LearnerScore,
    assignment_scores,
)
from teaching.models import Assignment, AssignmentExtension
from teaching.quizzes.learner_quizzes import quiz_standings


def _open_for(user) -> QuerySet[Assignment]:
    return Assignment.objects.filter(
        cohort__memberships__user=user,
        archived_at__isnull=True,
        opens_at__lte=timezone.now(),
    ).select_related("cohort")


@dataclass(frozen=True)
class LearnerAssignment:
    assignment: Assignment
    score: LearnerScore
    # quiz id -> when its held-back result will show (learner_quizzes' words)
    held: dict[int, str] = field(default_factory=dict)

    @property
    def past_due(self) -> bool:
        return timezone.now() > self.score.due_at

    @property
    def items(self) -> list[tuple[ItemScore, str]]:
        """Each item's score with the words that replace a held-back quiz's."""
        return [
            (s, "" if s.override else self.held.get(s.item.quiz_id or 0, ""))
            for s in self.score.items
        ]

    @property
    def waiting(self) -> bool:
        """Does a held-back quiz result count 0 in the score for now?"""
        return any(words for _, words in self.items)


def learner_assignments(*, user) -> list[LearnerAssignment]:
    assignments = list(
        _open_for(user).prefetch_related("items__quiz").order_by("due_at", "pk")
    )
    quizzes = [i.quiz for a in assignments for i in a.items.all() if i.quiz_id]
    held = {
        s.quiz.pk: s.held_words
        for s in quiz_standings(user=user, quizzes=quizzes)
        if s.held
    }
    return [
        LearnerAssignment(a, assignment_scores(a, [(user.pk, user.username)])[0], held)
        for a in assignments
    ]


def assignments_panel(*, user) -> dict | None:
    """The home page's "Your assignments", or None for a learner without any."""
    rows = learner_assignments(user=user)
    if not rows:
        return None
    return {"template": "teaching/_assignments_panel.html", "assignments": rows}


def grades_panel(*, user) -> dict | None:
    """The progress page's "My grades": every assignment (once opened) and
    every quiz of the learner's cohorts, each score as released; None for a
    learner without any."""
    assignments = learner_assignments(user=user)
    quizzes = quiz_standings(user=user)
    if not assignments and not quizzes:
        return None
    return {
        "template": "teaching/_grades_panel.html",
        "assignments": assignments,
        "quizzes": quizzes,
    }


def exercise_due_notes(*, user, exercise) -> list[dict]:
    """When each open assignment that holds `exercise` is due for `user`."""
    assignments = _open_for(user).filter(items__exercise=exercise).distinct()
    extended = dict(
        AssignmentExtension.objects.filter(
            learner=user, assignment__in=assignments
        ).values_list("assignment_id", "due_at")
    )
    notes = []
    for assignment in assignments.order_by("due_at"):
        due = extended.get(assignment.pk, assignment.due_at)
        notes.append(
            {
                "assignment": assignment.title,
                "due_at": due,
                "extended": assignment.pk in extended,
                "past_due": timezone.now() > due,
                "late_policy": assignment.get_late_policy_display(),
            }
        )
    return notes
