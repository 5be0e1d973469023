"""A learner's own assignments: their home page panel, an exercise's due date.

Registered into the layers below (quiz.learning.home_panels and
grader.exercise_notes) by quiz.teaching.hooks. Only assignments that have
opened, are not archived, and belong to a cohort the learner is in.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils import timezone

from quiz.teaching.assignments.scoring import LearnerScore, assignment_scores
from quiz.teaching.models import Assignment, AssignmentExtension


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

    @property
    def past_due(self) -> bool:
        return timezone.now() > self.score.due_at


def learner_assignments(*, user) -> list[LearnerAssignment]:
    return [
        LearnerAssignment(a, assignment_scores(a, [(user.pk, user.username)])[0])
        for a in _open_for(user).order_by("due_at", "pk")
    ]


def assignments_panel(*, user) -> dict | None:
    """The home page's "Your assignments", or None for a learner without any."""
    rows = learner_assignments(user=user)
    if not rows:
        return None
    return {"template": "quiz/_assignments_panel.html", "assignments": rows}


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
