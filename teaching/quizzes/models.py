"""Quizzes, their slots, learners' attempts and accommodations.

Found by Django through teaching.models; their tables keep their quiz_ names.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q


class Quiz(models.Model):
    """A timed, closed assessment for a cohort, drawn slot by slot."""

    class Combine(models.TextChoices):
        BEST = "best", "The best attempt counts"
        LAST = "last", "The last attempt counts"
        AVERAGE = "average", "The average of the attempts counts"

    class Feedback(models.TextChoices):
        IMMEDIATE = "immediate", "At once: each answer is checked as it is given"
        AFTER_SUBMIT = (
            "after_submit",
            (
                "Once the learner has submitted their last attempt (or their close "
                "has passed)"
            ),
        )
        AFTER_CLOSE = "after_close", "Once the quiz has closed for everyone"

    cohort = models.ForeignKey(
        "teaching.Cohort", on_delete=models.PROTECT, related_name="quizzes"
    )
    title = models.CharField(max_length=200)
    opens_at = models.DateTimeField()
    closes_at = models.DateTimeField()
    time_limit = models.FloatField(
        null=True,
        blank=True,
        help_text="Minutes per attempt (fractions allowed: 7.5 is 7 min 30 s); "
        "empty for none.",
    )
    attempts_allowed = models.PositiveSmallIntegerField(default=1)
    combine = models.CharField(
        max_length=8, choices=Combine.choices, default=Combine.BEST
    )
    feedback = models.CharField(
        max_length=12, choices=Feedback.choices, default=Feedback.AFTER_SUBMIT
    )
    shuffle = models.BooleanField(
        default=True, help_text="Shuffle question order and option order per attempt."
    )
    archived_at = models.DateTimeField(null=True, blank=True)
    released_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When held-back scores last went out (scores_changed) after the "
        "quiz closed for everyone; cleared when it can be answered again.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_quiz"
        ordering = ["closes_at", "id"]
        verbose_name_plural = "quizzes"
        constraints = [
            models.CheckConstraint(
                condition=Q(closes_at__gt=F("opens_at")),
                name="quiz_closes_after_opening",
            ),
            models.CheckConstraint(
                condition=Q(attempts_allowed__gte=1), name="quiz_allows_an_attempt"
            ),
            models.CheckConstraint(
                condition=Q(time_limit__isnull=True) | Q(time_limit__gt=0),
                name="quiz_time_limit_positive",
            ),
        ]

    def __str__(self) -> str:
        return self.title


class QuizSlot(models.Model):
    """A place in a quiz that draws `draw` questions from its pool.

    `pool` holds what it draws from: {"questions": [self-check ids],
    "templates": [slugs], "lessons": [slugs], "sections": [slugs]}; a
    lesson or section brings its scored self-checks and its templates.
    Each drawn question is worth points / draw.
    """

    quiz = models.ForeignKey(Quiz, on_delete=models.CASCADE, related_name="slots")
    order = models.PositiveSmallIntegerField(default=0)
    points = models.FloatField(default=1.0)
    draw = models.PositiveSmallIntegerField(default=1)
    pool = models.JSONField(default=dict)

    class Meta:
        db_table = "quiz_quizslot"
        ordering = ["quiz", "order", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(points__gt=0), name="quiz_slot_points_positive"
            ),
            models.CheckConstraint(condition=Q(draw__gte=1), name="quiz_slot_draws"),
        ]

    def __str__(self) -> str:
        return f"{self.quiz}: slot {self.order + 1}"


class QuizAttempt(models.Model):
    """One sitting of a quiz by one learner, with what it drew and answered.

    `items` is frozen at the start: per drawn question its slot, what it is
    (`ref`: "q:<id>" or "t:<slug>"), its variant seed and its option order,
    so a reload or another device shows the same thing. The key is not
    stored: scoring reads the current question, so a regrade sees a fix.
    `answers` maps an item's index to {"value", "saved_at"}.
    """

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress"
        SUBMITTED = "submitted"

    quiz = models.ForeignKey(Quiz, on_delete=models.PROTECT, related_name="attempts")
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    number = models.PositiveSmallIntegerField()
    preview = models.BooleanField(default=False)
    seed = models.CharField(max_length=32)
    items = models.JSONField(default=list)
    answers = models.JSONField(default=dict)
    state = models.CharField(
        max_length=12, choices=State.choices, default=State.IN_PROGRESS
    )
    started_at = models.DateTimeField()
    deadline = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    submitted_by = models.CharField(
        max_length=12, blank=True, help_text="learner, deadline or instructor"
    )
    points = models.FloatField(null=True, blank=True)
    possible = models.FloatField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True, help_text="points / possible")
    results = models.JSONField(
        default=list, blank=True, help_text="Per item: its fraction right (0-1)."
    )
    saves = models.PositiveIntegerField(default=0)
    code_waiting = models.BooleanField(
        default=False,
        help_text="Saved code not yet sent to the grader: it goes when the "
        "feedback policy lets its checks show (quizzes.code).",
    )
    flags = models.JSONField(
        default=list, blank=True, help_text="Question numbers flagged for review."
    )

    class Meta:
        db_table = "quiz_quizattempt"
        ordering = ["quiz", "learner", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["quiz", "learner", "preview", "number"],
                name="quiz_attempt_number_once",
            ),
            models.UniqueConstraint(
                fields=["quiz", "learner"],
                condition=Q(state="in_progress"),
                name="quiz_one_attempt_in_progress",
            ),
        ]
        indexes = [
            models.Index(
                fields=["deadline"],
                condition=Q(state="in_progress"),
                name="quiz_attempt_open_deadline",
            ),
            models.Index(
                fields=["quiz"],
                condition=Q(code_waiting=True),
                name="quiz_attempt_code_waiting",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quiz}: {self.learner} #{self.number}"


class QuizCodeAnswer(models.Model):
    """A code question's answer as the grader took it: its submission and score.

    Made only when the quiz's feedback policy lets the grader's checks show
    (the grader's pages show a submission's checks at once), so before that
    the code lives in the attempt's answers alone. `fraction` is the score
    the attempt last counted, so a later verdict (or an exercise regrade)
    that differs is noticed. `refused` says why the grader would not take it.
    """

    attempt = models.ForeignKey(
        QuizAttempt, on_delete=models.CASCADE, related_name="code_answers"
    )
    item = models.PositiveSmallIntegerField(help_text="The question's number.")
    submission = models.OneToOneField(
        "grader.Submission",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
    )
    refused = models.CharField(max_length=300, blank=True)
    fraction = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "quiz_quizcodeanswer"
        ordering = ["attempt", "item"]
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "item"], name="quiz_code_answer_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.attempt}: question {self.item}"


class QuizAccommodation(models.Model):
    """More time (a factor on the limit) and a later close, for one learner."""

    quiz = models.ForeignKey(
        Quiz, on_delete=models.CASCADE, related_name="accommodations"
    )
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    time_factor = models.FloatField(default=1.0)
    closes_at = models.DateTimeField(null=True, blank=True)
    extra_attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Attempts beyond the quiz's own (a reopen gives one)."
    )
    granted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    granted_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_quizaccommodation"
        constraints = [
            models.UniqueConstraint(
                fields=["quiz", "learner"], name="quiz_accommodation_once"
            ),
            models.CheckConstraint(
                condition=Q(time_factor__gte=1), name="quiz_time_factor_at_least_one"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quiz}: {self.learner} x{self.time_factor:g}"


class QuizRegrade(models.Model):
    """Every attempt of a quiz scored again, after a question's key was fixed."""

    quiz = models.ForeignKey(Quiz, on_delete=models.CASCADE, related_name="regrades")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    what = models.CharField(
        max_length=300,
        blank=True,
        help_text="What changed: empty for a plain regrade, else the question "
        "and its change.",
    )
    total = models.PositiveIntegerField(default=0)
    changed = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "quiz_quizregrade"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.quiz}: regrade {self.created_at:%Y-%m-%d %H:%M}"


class QuizRegradeResult(models.Model):
    """One attempt scored again: its old score (kept) and its new one."""

    regrade = models.ForeignKey(
        QuizRegrade, on_delete=models.CASCADE, related_name="results"
    )
    attempt = models.ForeignKey(QuizAttempt, on_delete=models.CASCADE, related_name="+")
    old_points = models.FloatField(null=True)
    old_score = models.FloatField(null=True)
    old_results = models.JSONField(default=list)
    new_points = models.FloatField(null=True)
    new_score = models.FloatField(null=True)
    new_results = models.JSONField(default=list)
    changed = models.BooleanField(default=False)

    class Meta:
        db_table = "quiz_quizregraderesult"
        ordering = ["pk"]


class QuizQuestionChange(models.Model):
    """A question regraded for this quiz only: a new key or tolerance, full
    credit for everyone, or dropped (its points leave every attempt's total).

    The question itself (a self-check, template or quiz-only question) stays
    as it is for every other quiz and cohort. One change per question; a
    new one replaces it (the audit log and the regrade reports keep the past).
    """

    class Action(models.TextChoices):
        KEY = "key", "Change the key"
        TOLERANCE = "tolerance", "Change the tolerance"
        FULL_CREDIT = "full_credit", "Full credit for everyone"
        DROP = "drop", "Drop the question"

    quiz = models.ForeignKey(
        Quiz, on_delete=models.CASCADE, related_name="question_changes"
    )
    ref = models.CharField(max_length=100, help_text="The question: q:, t:, b: or x:")
    action = models.CharField(max_length=12, choices=Action.choices)
    answer = models.JSONField(
        null=True,
        blank=True,
        help_text="key: the right option (its index as stored) or the number.",
    )
    tolerance_absolute = models.FloatField(null=True, blank=True)
    tolerance_relative = models.FloatField(null=True, blank=True)
    comment = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_quizquestionchange"
        ordering = ["quiz", "ref"]
        constraints = [
            models.UniqueConstraint(
                fields=["quiz", "ref"], name="quiz_question_change_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.quiz}: {self.ref} {self.action}"


class QuizItemOverride(models.Model):
    """An instructor's score for one question of one attempt, with why.

    Scoring applies it after the keys, so a regrade keeps it; the attempt's
    score (and through it the gradebook and the LMS) follows.
    """

    attempt = models.ForeignKey(
        QuizAttempt, on_delete=models.CASCADE, related_name="overrides"
    )
    item = models.PositiveSmallIntegerField(help_text="The question's number.")
    fraction = models.FloatField(help_text="Its share of the question's points, 0-1.")
    comment = models.TextField()
    set_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    set_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "quiz_quizitemoverride"
        ordering = ["attempt", "item"]
        constraints = [
            models.UniqueConstraint(
                fields=["attempt", "item"], name="quiz_item_override_once"
            ),
            models.CheckConstraint(
                condition=Q(fraction__gte=0) & Q(fraction__lte=1),
                name="quiz_item_override_fraction",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.attempt}: question {self.item} = {self.fraction:g}"
