"""Course content: sections, lessons, follow-ups and self-check questions."""

from django.db import models
from django.db.models import Q
from django.urls import reverse


class Section(models.Model):
    slug = models.SlugField(max_length=80, unique=True)
    order = models.PositiveSmallIntegerField()
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, help_text="Markdown.")

    class Meta:
        ordering = ["order"]
        constraints = [
            models.UniqueConstraint(fields=["order"], name="section_order_unique")
        ]

    def __str__(self) -> str:
        return f"{self.order}. {self.title}"


class Lesson(models.Model):
    section = models.ForeignKey(
        Section, on_delete=models.PROTECT, related_name="lessons"
    )
    slug = models.SlugField(max_length=80, unique=True)
    order = models.PositiveSmallIntegerField(help_text="Position within the section.")
    title = models.CharField(max_length=200)
    question = models.TextField(help_text="The interview question the lesson answers.")
    takeaway = models.TextField(blank=True, help_text="The one idea to remember.")
    body = models.TextField(help_text="The answer, in Markdown.")
    tags = models.JSONField(default=list, blank=True)
    reading_time = models.PositiveSmallIntegerField(default=5, help_text="Minutes.")
    source_path = models.CharField(
        max_length=300, blank=True, help_text="File in content/ this lesson loads from."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["section__order", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["section", "order"], name="lesson_order_unique_in_section"
            )
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("lesson", kwargs={"slug": self.slug})


class FollowUp(models.Model):
    lesson = models.ForeignKey(
        Lesson, on_delete=models.CASCADE, related_name="follow_ups"
    )
    order = models.PositiveSmallIntegerField(default=0)
    question = models.TextField()
    answer = models.TextField(help_text="Markdown.")

    class Meta:
        ordering = ["lesson", "order"]

    def __str__(self) -> str:
        return self.question[:80]


class Question(models.Model):
    """A self-check question; `kind` decides which answer fields apply."""

    class Kind(models.TextChoices):
        CHOICE = "choice", "Multiple choice"
        NUMERIC = "numeric", "Numeric (with tolerance)"
        RECALL = "recall", "Free recall (self-rated)"

    lesson = models.ForeignKey(
        Lesson, on_delete=models.CASCADE, related_name="questions"
    )
    order = models.PositiveSmallIntegerField(default=0)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    prompt = models.TextField(help_text="Markdown.")
    choices = models.JSONField(
        default=list, blank=True, help_text="Multiple choice: list of options."
    )
    correct_choice = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Multiple choice: 0-based index."
    )
    numeric_answer = models.FloatField(null=True, blank=True)
    tolerance = models.FloatField(
        default=0, help_text="Numeric: absolute tolerance accepted around the answer."
    )
    model_answer = models.TextField(
        blank=True, help_text="Free recall: the answer learners compare theirs with."
    )
    explanation = models.TextField(
        blank=True, help_text="Markdown shown after answering."
    )

    class Meta:
        ordering = ["lesson", "order"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(kind="choice") | Q(correct_choice__isnull=False),
                name="question_choice_has_answer",
            ),
            models.CheckConstraint(
                condition=~Q(kind="numeric") | Q(numeric_answer__isnull=False),
                name="question_numeric_has_answer",
            ),
            models.CheckConstraint(
                condition=Q(tolerance__gte=0), name="question_tolerance_non_negative"
            ),
        ]

    def __str__(self) -> str:
        return self.prompt[:80]

    def is_correct(self, raw: str) -> bool:
        """Judge a learner's answer (choice index or number) against the key."""
        try:
            if self.kind == self.Kind.CHOICE:
                return int(raw) == self.correct_choice
            if self.kind == self.Kind.NUMERIC:
                value = float(str(raw).replace(",", "").replace("_", ""))
                return abs(value - self.numeric_answer) <= self.tolerance
        except (TypeError, ValueError):
            return False
        return False
