"""What a learner has done: lessons read, self-check attempts, review cards."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class LessonRead(models.Model):
    """First and latest time a learner opened a lesson (one row per pair)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lesson_reads"
    )
    lesson = models.ForeignKey(
        "quiz.Lesson", on_delete=models.CASCADE, related_name="reads"
    )
    first_read_at = models.DateTimeField(auto_now_add=True)
    last_read_at = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "lesson"], name="lesson_read_once_per_user"
            )
        ]


class QuestionAttempt(models.Model):
    """One answer to a self-check. Recall answers are self-rated, not judged."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="question_attempts",
    )
    question = models.ForeignKey(
        "quiz.Question", on_delete=models.CASCADE, related_name="attempts"
    )
    answer = models.TextField(blank=True)
    correct = models.BooleanField(
        help_text="Judged for choice/numeric; the learner's own rating for recall."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "question", "created_at"])]


class ReviewCard(models.Model):
    """An FSRS card: one follow-up or one self-check scheduled for one learner.

    `state` is fsrs.Card.to_dict(); `due` is copied out of it so that "what is
    due now" is an indexed query.
    """

    class Reason(models.TextChoices):
        STUDIED = "studied", "Rated while reading"
        EXERCISE = "exercise", "A failed exercise check"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards"
    )
    follow_up = models.ForeignKey(
        "quiz.FollowUp",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="review_cards",
    )
    question = models.ForeignKey(
        "quiz.Question",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="review_cards",
    )
    state = models.JSONField(default=dict)
    due = models.DateTimeField(db_index=True)
    reason = models.CharField(
        max_length=10, choices=Reason.choices, default=Reason.STUDIED
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["due"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(follow_up__isnull=False) & Q(question__isnull=True))
                | (Q(follow_up__isnull=True) & Q(question__isnull=False)),
                name="review_card_one_target",
            ),
            models.UniqueConstraint(
                fields=["user", "follow_up"],
                condition=Q(follow_up__isnull=False),
                name="review_card_follow_up_once",
            ),
            models.UniqueConstraint(
                fields=["user", "question"],
                condition=Q(question__isnull=False),
                name="review_card_question_once",
            ),
        ]
        indexes = [models.Index(fields=["user", "due"])]


class ReviewLog(models.Model):
    """One rating of a card (Again=1, Hard=2, Good=3, Easy=4), for history."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_logs"
    )
    card = models.ForeignKey(ReviewCard, on_delete=models.CASCADE, related_name="logs")
    rating = models.PositiveSmallIntegerField()
    reviewed_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-reviewed_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(rating__gte=1) & Q(rating__lte=4),
                name="review_log_rating_range",
            )
        ]
