"""Exercises: the gradable parts of a lesson, editable in the admin."""

from django.db import models


class Exercise(models.Model):
    """A code exercise; `harness` names the module in grader/exercises that grades it."""

    slug = models.SlugField(max_length=80, unique=True)
    lesson = models.ForeignKey(
        "quiz.Lesson",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="exercises",
    )
    title = models.CharField(max_length=200)
    harness = models.SlugField(
        max_length=80, help_text="Grading module in grader/exercises, e.g. tie-weights."
    )
    entry_point = models.CharField(
        max_length=80, help_text="Function the learner defines."
    )
    signature = models.CharField(max_length=300)
    prompt = models.TextField(help_text="Markdown shown to the learner.")
    starter = models.TextField(help_text="Starter code in the editor.")
    solution = models.TextField(help_text="Reference solution; shown after a pass.")
    wrong_solutions = models.JSONField(
        default=list,
        blank=True,
        help_text="Known mistakes [{name, diagnosis, code}]; tests prove each fails.",
    )
    published = models.BooleanField(default=True)
    source_path = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug
