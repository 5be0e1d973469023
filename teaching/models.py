"""Cohorts: an instructor's group of learners, joined with a code; assignments.

The teaching app's models; its quizzes' models live in teaching.quizzes.models
and are imported here so Django finds them. Every table keeps the name it had
when these models belonged to the quiz app (`db_table`, `quiz_...`): the move
to this app changed no table (migration teaching 0001).
"""

from django.conf import settings
from django.db import models

from teaching.quizzes.models import (
    Quiz,
    QuizAccommodation,
    QuizAttempt,
    QuizCodeAnswer,
    QuizItemOverride,
    QuizQuestionChange,
    QuizRegrade,
    QuizRegradeResult,
    QuizSlot,
)

__all__ = [
    "Assignment",
    "AssignmentExtension",
    "AssignmentItem",
    "Cohort",
    "CohortMembership",
    "Quiz",
    "QuizAccommodation",
    "QuizAttempt",
    "QuizCodeAnswer",
    "QuizItemOverride",
    "QuizQuestionChange",
    "QuizRegrade",
    "QuizRegradeResult",
    "QuizSlot",
    "ScoreOverride",
]


class Cohort(models.Model):
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="cohorts_owned"
    )
    join_code = models.CharField(
        max_length=16, unique=True, help_text="Learners join with this code or link."
    )
    # Co-instructors: an LMS course's other teachers (lms/ adds them at launch).
    instructors = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="cohorts_taught",
        db_table="quiz_cohort_instructors",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "quiz_cohort"
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class CohortMembership(models.Model):
    cohort = models.ForeignKey(
        Cohort, on_delete=models.CASCADE, related_name="memberships"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="cohort_memberships",
    )
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "quiz_cohortmembership"
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["cohort", "user"], name="cohort_member_once"
            )
        ]


class Assignment(models.Model):
    """Graded work for a cohort: exercises and lessons, due at a time."""

    class LatePolicy(models.TextChoices):
        NONE = "none", "Late work counts in full"
        PENALTY = "penalty", "A penalty per day late, up to a cap"
        NO_CREDIT = "no_credit", "No credit after the due date"

    cohort = models.ForeignKey(
        Cohort, on_delete=models.PROTECT, related_name="assignments"
    )
    title = models.CharField(max_length=200)
    opens_at = models.DateTimeField(help_text="When learners see it (UTC).")
    due_at = models.DateTimeField(help_text="When it is due (UTC).")
    late_policy = models.CharField(
        max_length=10, choices=LatePolicy.choices, default=LatePolicy.NONE
    )
    penalty_per_day = models.FloatField(
        default=0.0, help_text="Share of an item's credit lost per day late (0-1)."
    )
    penalty_cap = models.FloatField(
        default=1.0, help_text="The most that lateness may take (0-1)."
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="assignments_created",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_assignment"
        ordering = ["due_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(due_at__gte=models.F("opens_at")),
                name="assignment_due_after_opening",
            ),
            models.CheckConstraint(
                condition=models.Q(penalty_per_day__gte=0, penalty_per_day__lte=1)
                & models.Q(penalty_cap__gte=0, penalty_cap__lte=1),
                name="assignment_penalty_in_unit_interval",
            ),
        ]

    def __str__(self) -> str:
        return self.title


class AssignmentItem(models.Model):
    """One exercise, one lesson whose self-checks count, or one quiz of the
    assignment's cohort, in an assignment."""

    class Kind(models.TextChoices):
        EXERCISE = "exercise"
        LESSON = "lesson"
        QUIZ = "quiz"

    assignment = models.ForeignKey(
        Assignment, on_delete=models.CASCADE, related_name="items"
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    exercise = models.ForeignKey(
        "grader.Exercise", on_delete=models.PROTECT, null=True, blank=True
    )
    lesson = models.ForeignKey(
        "quiz.Lesson", on_delete=models.PROTECT, null=True, blank=True
    )
    quiz = models.ForeignKey(
        "teaching.Quiz",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="assignment_items",
    )
    weight = models.FloatField(default=1.0, help_text="Points this item is worth.")
    order = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "quiz_assignmentitem"
        ordering = ["order", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    models.Q(
                        kind="exercise", exercise__isnull=False, lesson=None, quiz=None
                    )
                    | models.Q(
                        kind="lesson", lesson__isnull=False, exercise=None, quiz=None
                    )
                    | models.Q(
                        kind="quiz", quiz__isnull=False, exercise=None, lesson=None
                    )
                ),
                name="assignment_item_names_one_thing",
            ),
            models.CheckConstraint(
                condition=models.Q(weight__gt=0), name="assignment_item_weight_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def slug(self) -> str:
        """What names the item's target: an exercise's or lesson's slug, a
        quiz's id (as text)."""
        if self.kind == self.Kind.QUIZ:
            return str(self.quiz_id) if self.quiz_id else "?"
        target = self.exercise if self.kind == self.Kind.EXERCISE else self.lesson
        return target.slug if target else "?"

    @property
    def label(self) -> str:
        if self.kind == self.Kind.QUIZ:
            title = self.quiz.title if self.quiz_id else "?"
            return f"quiz: {title} (#{self.slug})"
        return f"{self.kind}: {self.slug}"


class AssignmentExtension(models.Model):
    """A later due date for one learner."""

    assignment = models.ForeignKey(
        Assignment, on_delete=models.CASCADE, related_name="extensions"
    )
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="extensions"
    )
    due_at = models.DateTimeField()
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_assignmentextension"
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "learner"], name="one_extension_per_learner"
            )
        ]

    def __str__(self) -> str:
        return f"{self.assignment}: {self.learner} until {self.due_at:%Y-%m-%d %H:%M}"


class ScoreOverride(models.Model):
    """An instructor's score for one item of one learner, with the reason."""

    item = models.ForeignKey(
        AssignmentItem, on_delete=models.CASCADE, related_name="overrides"
    )
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="overrides"
    )
    score = models.FloatField()
    reason = models.TextField()
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    set_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_scoreoverride"
        constraints = [
            models.UniqueConstraint(
                fields=["item", "learner"], name="one_override_per_item_and_learner"
            ),
            models.CheckConstraint(
                condition=models.Q(score__gte=0, score__lte=1),
                name="override_score_in_unit_interval",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item} for {self.learner}: {self.score:g}"
