"""Writes for assignments: create, edit, archive, extensions and overrides.

Every client (the instructor pages and the API) comes through here, so the
rules hold on both: a due date after the opening, items that exist (a quiz
item: a quiz of the assignment's own cohort), an extension only for a
member, an override in 0-1 with a reason, no delete of an assignment that
has scores (archive it), and every change audited.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from grader.models import Exercise, Submission
from quiz.content.models import Lesson, Question
from quiz.core.audit import (
    Action,
    audit_changes,
    audit_created,
    audit_record,
    audit_snapshot,
)
from quiz.core.params import id_in_range
from quiz.core.score_events import scores_changed
from quiz.learning.models import QuestionAttempt
from teaching.models import (
    Assignment,
    AssignmentExtension,
    AssignmentItem,
    CohortMembership,
    ScoreOverride,
)
from teaching.quizzes.models import Quiz, QuizAttempt

Kind = AssignmentItem.Kind
TITLE_MAX = Assignment._meta.get_field("title").max_length
MAX_ITEMS = 100
REASON_MAX = 2000


class AssignmentError(ValueError):
    """The request cannot be carried out; `field` names what to fix."""

    def __init__(self, message: str, *, field: str = "non_field_errors"):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ItemSpec:
    kind: str  # "exercise", "lesson" or "quiz"
    slug: str  # a quiz's id (text or number) for a quiz
    weight: float = 1.0


def _unit(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AssignmentError(f"{name} must be a number from 0 to 1.", field=name)
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise AssignmentError(f"{name} must be from 0 to 1.", field=name)
    return float(value)


def _check_times(opens_at: datetime, due_at: datetime) -> None:
    if due_at < opens_at:
        raise AssignmentError(
            "The due date is before the opening date.", field="due_at"
        )


def _quiz_id(slug) -> int | None:
    """A quiz item's `slug` is the quiz's id, as text or as a number."""
    if isinstance(slug, int) and not isinstance(slug, bool):
        return slug if id_in_range(slug) else None
    text = str(slug).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 19):
        return None
    value = int(text)
    return value if id_in_range(value) else None


def _resolve_items(specs: list[ItemSpec], *, cohort_id: int) -> list[AssignmentItem]:
    """Unsaved items for `specs`, or AssignmentError naming the bad one.

    A quiz item names a quiz of the assignment's cohort (`cohort_id`) by id.
    """
    if not specs:
        raise AssignmentError("An assignment needs at least one item.", field="items")
    if len(specs) > MAX_ITEMS:
        raise AssignmentError(f"At most {MAX_ITEMS} items.", field="items")
    items, seen = [], set()
    for order, spec in enumerate(specs):
        quiz_id = _quiz_id(spec.slug) if spec.kind == Kind.QUIZ else None
        key = (spec.kind, str(quiz_id) if quiz_id is not None else spec.slug)
        if key in seen:
            raise AssignmentError(
                f"{spec.kind} {spec.slug!r} is listed twice.", field="items"
            )
        seen.add(key)
        weight = spec.weight
        if isinstance(weight, bool) or not isinstance(weight, int | float):
            raise AssignmentError("An item's weight must be a number.", field="items")
        if not math.isfinite(weight) or not 0 < weight <= 1000:
            raise AssignmentError(
                "An item's weight must be above 0 and at most 1000.", field="items"
            )
        item = AssignmentItem(kind=spec.kind, weight=float(weight), order=order)
        if spec.kind == Kind.EXERCISE:
            item.exercise = Exercise.objects.filter(slug=spec.slug).first()
            if item.exercise is None:
                raise AssignmentError(f"No exercise {spec.slug!r}.", field="items")
        elif spec.kind == Kind.LESSON:
            item.lesson = Lesson.objects.filter(slug=spec.slug).first()
            if item.lesson is None:
                raise AssignmentError(f"No lesson {spec.slug!r}.", field="items")
            if not Question.objects.filter(lesson=item.lesson).exists():
                raise AssignmentError(
                    f"Lesson {spec.slug!r} has no self-checks to score.",
                    field="items",
                )
        elif spec.kind == Kind.QUIZ:
            quiz = None if quiz_id is None else Quiz.objects.filter(pk=quiz_id).first()
            if quiz is None:
                raise AssignmentError(
                    f"No quiz {spec.slug!r} (a quiz item names the quiz's id).",
                    field="items",
                )
            if quiz.cohort_id != cohort_id:
                raise AssignmentError(
                    f"Quiz {quiz.pk} belongs to another cohort: an assignment "
                    "holds only its own cohort's quizzes.",
                    field="items",
                )
            item.quiz = quiz
        else:
            raise AssignmentError(
                f"An item is an exercise, a lesson or a quiz, not {spec.kind!r}.",
                field="items",
            )
        items.append(item)
    return items


def _items_snapshot(assignment: Assignment) -> list[str]:
    return [
        f"{item.label} x{item.weight:g}"
        for item in assignment.items.select_related("exercise", "lesson", "quiz")
    ]


def _snapshot(assignment: Assignment) -> dict:
    return {**audit_snapshot(assignment), "items": _items_snapshot(assignment)}


def _check_policy(policy: str, per_day, cap) -> tuple[str, float, float]:
    if policy not in Assignment.LatePolicy.values:
        choices = ", ".join(Assignment.LatePolicy.values)
        raise AssignmentError(
            f"The late policy is one of {choices}.", field="late_policy"
        )
    return policy, _unit(per_day, "penalty_per_day"), _unit(cap, "penalty_cap")


def _check_title(title) -> str:
    title = " ".join(str(title or "").split())
    if not title:
        raise AssignmentError("Give the assignment a title.", field="title")
    if len(title) > TITLE_MAX:
        raise AssignmentError(
            f"A title has at most {TITLE_MAX} characters.", field="title"
        )
    return title


@transaction.atomic
def assignment_create(
    *,
    cohort,
    actor,
    title: str,
    opens_at: datetime,
    due_at: datetime,
    items: list[ItemSpec],
    late_policy: str = Assignment.LatePolicy.NONE,
    penalty_per_day: float = 0.0,
    penalty_cap: float = 1.0,
) -> Assignment:
    _check_times(opens_at, due_at)
    late_policy, penalty_per_day, penalty_cap = _check_policy(
        late_policy, penalty_per_day, penalty_cap
    )
    rows = _resolve_items(items, cohort_id=cohort.pk)
    assignment = Assignment.objects.create(
        cohort=cohort,
        title=_check_title(title),
        opens_at=opens_at,
        due_at=due_at,
        late_policy=late_policy,
        penalty_per_day=penalty_per_day,
        penalty_cap=penalty_cap,
        created_by=actor,
    )
    for item in rows:
        item.assignment = assignment
    AssignmentItem.objects.bulk_create(rows)
    audit_created(actor=actor, instance=assignment)
    return assignment


def assignment_has_scores(assignment: Assignment) -> bool:
    """Anything a member has done that one of its items would score."""
    members = CohortMembership.objects.filter(cohort=assignment.cohort_id).values(
        "user_id"
    )
    items = assignment.items.all()
    exercises = items.filter(kind=Kind.EXERCISE).values("exercise_id")
    lessons = items.filter(kind=Kind.LESSON).values("lesson_id")
    quizzes = items.filter(kind=Kind.QUIZ).values("quiz_id")
    return (
        ScoreOverride.objects.filter(item__assignment=assignment).exists()
        or Submission.objects.filter(
            user_id__in=members, exercise_id__in=exercises, score__isnull=False
        ).exists()
        or QuestionAttempt.objects.filter(
            user_id__in=members, question__lesson_id__in=lessons
        ).exists()
        or QuizAttempt.objects.filter(
            learner_id__in=members, quiz_id__in=quizzes, preview=False
        ).exists()
    )


EDITABLE = ("title", "opens_at", "due_at", "late_policy", "penalty_per_day",
            "penalty_cap")  # fmt: skip


@transaction.atomic
def assignment_update(
    *, assignment: Assignment, actor, items: list[ItemSpec] | None = None, **changes
) -> Assignment:
    """Change fields and/or replace the items; scores follow at once.

    `archived=True` archives it (False brings it back). The audit entry
    holds the old and new values, items included, so a re-scoring edit is
    on the record.
    """
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    before = _snapshot(assignment)
    unknown = set(changes) - {*EDITABLE, "archived"}
    if unknown:
        raise AssignmentError(f"Cannot change {', '.join(sorted(unknown))}.")
    if "title" in changes:
        assignment.title = _check_title(changes["title"])
    for name in ("opens_at", "due_at"):
        if name in changes:
            setattr(assignment, name, changes[name])
    _check_times(assignment.opens_at, assignment.due_at)
    (
        assignment.late_policy,
        assignment.penalty_per_day,
        assignment.penalty_cap,
    ) = _check_policy(
        changes.get("late_policy", assignment.late_policy),
        changes.get("penalty_per_day", assignment.penalty_per_day),
        changes.get("penalty_cap", assignment.penalty_cap),
    )
    if "archived" in changes:
        archived = bool(changes["archived"])
        if archived != (assignment.archived_at is not None):
            assignment.archived_at = timezone.now() if archived else None
    assignment.save()
    if items is not None:
        _replace_items(
            assignment, _resolve_items(items, cohort_id=assignment.cohort_id)
        )
    changed = audit_changes(old=before, new=_snapshot(assignment))
    if changed:
        audit_record(
            actor=actor, action=Action.UPDATE, instance=assignment, changes=changed
        )
        scores_changed(
            CohortMembership.objects.filter(cohort_id=assignment.cohort_id).values_list(
                "user_id", flat=True
            )
        )
    return assignment


def _replace_items(assignment: Assignment, rows: list[AssignmentItem]) -> None:
    """Make `rows` the items: kept items keep their row (and its overrides)."""

    def target(item: AssignmentItem) -> tuple[str, int | None]:
        return (item.kind, item.exercise_id or item.lesson_id or item.quiz_id)

    existing = {target(item): item for item in assignment.items.all()}
    for row in rows:
        kept = existing.pop(target(row), None)
        if kept is not None:
            kept.weight, kept.order = row.weight, row.order
            kept.save(update_fields=["weight", "order"])
        else:
            row.assignment = assignment
            row.save()
    for removed in existing.values():
        removed.delete()  # its overrides with it; the audit entry lists it


@transaction.atomic
def assignment_delete(*, assignment: Assignment, actor) -> None:
    """Delete an assignment nobody has scores in; otherwise AssignmentError."""
    if assignment_has_scores(assignment):
        raise AssignmentError(
            "This assignment has scores: archive it instead (they stay in the "
            "gradebook's history and leave the learners' pages)."
        )
    snapshot = _snapshot(assignment)
    audit_record(
        actor=actor,
        action=Action.DELETE,
        instance=assignment,
        changes=audit_changes(old=snapshot, new={}),
    )
    assignment.delete()


def _member(assignment: Assignment, learner) -> None:
    if not CohortMembership.objects.filter(
        cohort_id=assignment.cohort_id, user=learner
    ).exists():
        raise AssignmentError(
            f"{learner.username} is not in this assignment's cohort.",
            field="learner",
        )


@transaction.atomic
def extension_set(
    *, assignment: Assignment, actor, learner, due_at: datetime
) -> AssignmentExtension:
    """Give one learner a later due date (setting it again replaces it)."""
    _member(assignment, learner)
    if due_at <= assignment.due_at:
        raise AssignmentError(
            "An extension must be after the assignment's due date.", field="due_at"
        )
    extension, created = AssignmentExtension.objects.update_or_create(
        assignment=assignment,
        learner=learner,
        defaults={"due_at": due_at, "granted_by": actor},
    )
    audit_record(
        actor=actor,
        action=Action.CREATE if created else Action.UPDATE,
        instance=extension,
        changes={"due_at": [None, due_at.isoformat()], "learner": learner.username},
    )
    scores_changed([learner.pk])
    return extension


@transaction.atomic
def override_set(
    *, assignment: Assignment, actor, learner, item_id, score, reason: str
) -> ScoreOverride:
    """Set one learner's score for one item, with the reason; audited."""
    _member(assignment, learner)
    item = None
    if isinstance(item_id, int) and not isinstance(item_id, bool):
        if id_in_range(item_id):
            item = assignment.items.filter(pk=item_id).first()
    if item is None:
        raise AssignmentError("No such item in this assignment.", field="item")
    score = _unit(score, "score")
    reason = str(reason or "").strip()
    if not reason:
        raise AssignmentError("Say why the score is overridden.", field="reason")
    if len(reason) > REASON_MAX:
        raise AssignmentError(
            f"A reason has at most {REASON_MAX} characters.", field="reason"
        )
    before = ScoreOverride.objects.filter(item=item, learner=learner).first()
    old = {"score": before.score, "reason": before.reason} if before else {}
    override, _ = ScoreOverride.objects.update_or_create(
        item=item,
        learner=learner,
        defaults={"score": score, "reason": reason, "set_by": actor},
    )
    audit_record(
        actor=actor,
        action=Action.UPDATE if before else Action.CREATE,
        instance=override,
        changes={
            **audit_changes(old=old, new={"score": score, "reason": reason}),
            "learner": learner.username,
            "item": item.label,
        },
    )
    scores_changed([learner.pk])
    return override
