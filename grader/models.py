"""Exercises: the gradable parts of a lesson, editable in the admin."""

import uuid

from django.conf import settings
from django.db import models


class Exercise(models.Model):
    """A code exercise; `harness` names its module in grading_engine.exercises."""

    class Lane(models.TextChoices):
        LIGHT = "light"
        HEAVY = "heavy"

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
        max_length=80,
        help_text="Grading module in grading_engine.exercises, e.g. tie-weights.",
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
    right_solutions = models.JSONField(
        default=list,
        blank=True,
        help_text="Right answers in other idioms [{name, code}]; tests and "
        "verification prove each passes, so the checks accept what the prompt "
        "allows and not only the reference's form.",
    )
    published = models.BooleanField(default=True)
    declaration = models.JSONField(
        default=dict,
        blank=True,
        help_text="For harness `authored` only: the inputs, cases and outputs "
        "the exercise is graded on (docs/content-format.md); the solution is "
        "its reference, each wrong solution a known mistake.",
    )
    options = models.JSONField(
        default=dict,
        blank=True,
        help_text="Overrides the harness reads, e.g. tolerances {rtol, atol}.",
    )
    verified_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the reference solution last passed its own checks.",
    )
    verification = models.JSONField(
        default=dict,
        blank=True,
        help_text="The last reference-solution grade (status, score, failed checks).",
    )
    reference_ms = models.FloatField(
        null=True,
        blank=True,
        help_text="The CPU time the reference solution's job used in the "
        "sandbox (ms), measured when the exercise was last verified.",
    )
    time_budget_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text="CPU seconds a grade may use, measured at verification (10× "
        "the reference, at least 1.5 s); options.time_budget_seconds overrides it.",
    )
    source_path = models.CharField(max_length=300, blank=True)
    version = models.PositiveIntegerField(
        default=1,
        help_text="The verified version this row holds, which learners get; "
        "0 while none has verified (docs/exercise-versions.md).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class LocalCheck(models.Model):
    """An authored exercise's `course check` bundle (grader.local_checks; a
    built-in's is a file `make client` builds), with the key of what it was
    built from. A table of its own, so that reading exercises never reads
    the bundle's bytes (a wide visible case makes hundreds of KB)."""

    exercise = models.OneToOneField(
        Exercise, on_delete=models.CASCADE, related_name="local_check"
    )
    key = models.CharField(max_length=64)
    blob = models.BinaryField()
    built_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"local check of {self.exercise_id}"


class ExerciseVersion(models.Model):
    """One admin save of an exercise, verified in the background.

    The Exercise row stays the live version; a version's content replaces it
    only once its reference solution passes and its known wrong solutions
    fail (grader.versions).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        LIVE = "live"  # verified and promoted (it is, or was, the live version)
        FAILED = "failed"
        SUPERSEDED = "superseded"  # a newer save came before it was verified

    exercise = models.ForeignKey(
        Exercise, on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField()
    content = models.JSONField(help_text="The versioned fields, as saved.")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED
    )
    done = models.PositiveSmallIntegerField(default=0)
    total = models.PositiveSmallIntegerField(default=1)
    step = models.CharField(max_length=200, blank=True)
    verification = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["exercise", "number"], name="exercise_version_number_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.exercise_id} v{self.number} ({self.status})"


class Submission(models.Model):
    """One attempt at an exercise; the row is the source of truth for its state."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        PASSED = "passed"
        FAILED = "failed"
        ERROR = "error"
        CANCELLED = "cancelled"

    TERMINAL = (Status.PASSED, Status.FAILED, Status.ERROR, Status.CANCELLED)
    OUTSTANDING = (Status.QUEUED, Status.RUNNING)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions"
    )
    exercise = models.ForeignKey(
        Exercise, on_delete=models.CASCADE, related_name="submissions"
    )
    code = models.TextField()
    seed = models.BigIntegerField(help_text="Draw of the randomised cases.")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, db_index=True
    )
    lane = models.CharField(
        max_length=5,
        choices=Exercise.Lane.choices,
        default=Exercise.Lane.LIGHT,
        help_text="Heavy exercises may hold only some of a worker's slots.",
    )
    time_budget_seconds = models.FloatField(
        null=True, blank=True, help_text="The budget its grade ran with."
    )
    exercise_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="The exercise version it was graded against."
    )
    score = models.FloatField(null=True, blank=True)
    checks = models.JSONField(default=list, blank=True)
    stdout = models.TextField(blank=True)
    stderr = models.TextField(blank=True)
    grading_attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Times a worker claimed it; more than one means a crash."
    )
    claimed_by = models.CharField(max_length=200, blank=True)
    set_aside = models.BooleanField(
        default=False,
        help_text="Stopped once as a likely loop while others waited: it runs "
        "again at the lowest priority, in a burst slot (grader.lanes).",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    enqueued_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When it became its learner's next to grade; the queue's order.",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    grade_ms = models.FloatField(null=True, blank=True, help_text="Time in the grader.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "created_at"]),
            models.Index(fields=["status", "lane", "enqueued_at"]),
            models.Index(fields=["user", "status", "created_at"]),
        ]
        constraints = [
            # One grading slot per learner at a time, whatever the workers do.
            models.UniqueConstraint(
                fields=["user"],
                condition=models.Q(status="running"),
                name="submission_one_running_per_user",
            ),
            models.CheckConstraint(
                condition=models.Q(score__isnull=True)
                | models.Q(score__gte=0, score__lte=1),
                name="submission_score_in_unit_interval",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    status__in=[
                        "queued",
                        "running",
                        "passed",
                        "failed",
                        "error",
                        "cancelled",
                    ]
                ),
                name="submission_status_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.exercise_id}:{self.id} {self.status}"

    @property
    def is_terminal(self) -> bool:
        return self.status in self.TERMINAL


class Regrade(models.Model):
    """Grading an exercise's submissions again, after its checks changed.

    The submissions get the new verdicts; each one's old verdict is kept in
    its RegradeResult. `user_ids` limits it to some learners (a cohort);
    None means everyone's. `cohort_id` names the cohort it was asked for
    (read by the teaching layer, which owns cohorts).
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"

    exercise = models.ForeignKey(
        Exercise, on_delete=models.CASCADE, related_name="regrades"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        related_name="regrades_requested",
    )
    scope = models.CharField(max_length=200, help_text="Whose submissions, in words.")
    cohort_id = models.BigIntegerField(null=True, blank=True)
    user_ids = models.JSONField(null=True, blank=True)
    status = models.CharField(
        max_length=8, choices=Status.choices, default=Status.QUEUED
    )
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)
    errors = models.PositiveIntegerField(
        default=0, help_text="Grades the grader itself failed; the old verdict stays."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"regrade of {self.exercise_id} ({self.scope})"


class RegradeResult(models.Model):
    """One submission graded again: its old verdict and its new one."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        ERROR = "error"  # the grader failed; the submission kept its verdict

    regrade = models.ForeignKey(
        Regrade, on_delete=models.CASCADE, related_name="results"
    )
    submission = models.ForeignKey(
        Submission, on_delete=models.CASCADE, related_name="regrade_results"
    )
    status = models.CharField(
        max_length=8, choices=Status.choices, default=Status.PENDING
    )
    claimed_by = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    old_status = models.CharField(max_length=10)
    old_score = models.FloatField(null=True, blank=True)
    old_checks = models.JSONField(default=list, blank=True)
    new_status = models.CharField(max_length=10, blank=True)
    new_score = models.FloatField(null=True, blank=True)
    new_checks = models.JSONField(default=list, blank=True)
    changed = models.BooleanField(default=False)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["status", "regrade"])]
        constraints = [
            models.UniqueConstraint(
                fields=["regrade", "submission"], name="regrade_each_submission_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.submission_id}: {self.old_status} -> {self.new_status or '?'}"
