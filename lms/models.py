"""What the tool keeps of an LMS beyond django-lti's registrations and contexts.

django-lti (`lti_tool`) stores registrations, deployments, keys, LMS users,
contexts and memberships. Here: the link of an LMS identity to a local
account, of an LMS course to a cohort, of an assignment to its line item,
each learner's score on its way to the LMS (an assignment's, or a link's to
a line item the LMS made), and the nonces already used.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from lti_tool.models import LtiContext, LtiDeployment, LtiRegistration

from teaching.models import Assignment, Cohort
from teaching.quizzes.models import Quiz

# A line item or a score is an assignment's or a quiz's, never both.
ONE_SOURCE = Q(assignment__isnull=False, quiz=None) | Q(
    assignment=None, quiz__isnull=False
)


class LmsAccount(models.Model):
    """An LMS user (issuer, subject) is this local account, for good."""

    issuer = models.CharField(max_length=255)
    sub = models.CharField(max_length=255)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="lms_accounts"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "sub"], name="lms_account_once")
        ]

    def __str__(self) -> str:
        return f"{self.sub} @ {self.issuer}"


class LmsCourse(models.Model):
    """An LMS course (an LTI context) taught as a cohort."""

    context = models.OneToOneField(
        LtiContext, on_delete=models.CASCADE, related_name="lms_course"
    )
    cohort = models.OneToOneField(
        Cohort, on_delete=models.CASCADE, related_name="lms_course"
    )
    roster_synced_at = models.DateTimeField(null=True, blank=True)
    roster_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.context} -> {self.cohort}"


class LineItem(models.Model):
    """The LMS gradebook column of one assignment, or one quiz, in one course."""

    course = models.ForeignKey(
        LmsCourse, on_delete=models.CASCADE, related_name="line_items"
    )
    assignment = models.ForeignKey(
        Assignment,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="lms_line_items",
    )
    quiz = models.ForeignKey(
        Quiz,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="lms_line_items",
    )
    url = models.URLField(max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["course", "assignment"], name="lms_line_item_once"
            ),
            models.UniqueConstraint(
                fields=["course", "quiz"], name="lms_quiz_line_item_once"
            ),
            models.CheckConstraint(
                condition=ONE_SOURCE, name="lms_line_item_of_one_thing"
            ),
        ]

    @property
    def source(self) -> Assignment | Quiz:
        return self.assignment or self.quiz


class ScoreDelivery(models.Model):
    """A learner's score as the LMS should have it, and how sending it went.

    `version` goes up each time the score changes; a send records the version
    it delivered, so a retry or a second worker never sends an older score
    after a newer one (sends hold the row's lock), and the LMS gets each
    score's own timestamp.
    """

    lms_user_id = models.CharField(max_length=255)
    score = models.FloatField(help_text="0-100, as the gradebook shows it.")
    computed_at = models.DateTimeField()
    version = models.PositiveIntegerField(default=1)
    sent_version = models.PositiveIntegerField(default=0)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    failed = models.BooleanField(
        default=False, help_text="The LMS refused it; not retried until it changes."
    )

    class Meta:
        abstract = True

    @property
    def pending(self) -> bool:
        return self.sent_version < self.version and not self.failed


class ScoreSync(ScoreDelivery):
    """A learner's score in an assignment, or a quiz, of an LMS-linked cohort."""

    course = models.ForeignKey(
        LmsCourse, on_delete=models.CASCADE, related_name="score_syncs"
    )
    assignment = models.ForeignKey(
        Assignment,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="lms_score_syncs",
    )
    quiz = models.ForeignKey(
        Quiz,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="lms_score_syncs",
    )
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["course", "assignment", "learner"], name="lms_score_once"
            ),
            models.UniqueConstraint(
                fields=["course", "quiz", "learner"], name="lms_quiz_score_once"
            ),
            models.CheckConstraint(condition=ONE_SOURCE, name="lms_score_of_one_thing"),
        ]
        indexes = [models.Index(fields=["sent_version", "version"])]

    @property
    def source(self) -> Assignment | Quiz:
        """What the score is of: the assignment or the quiz."""
        return self.assignment or self.quiz


class LinkScore(ScoreDelivery):
    """A learner's score on what a resource link opens, for the line item the
    LMS made for that link (an LMS assignment whose submission type is this
    tool) and named in the launch's AGS claim (`lineitem`)."""

    deployment = models.ForeignKey(
        LtiDeployment, on_delete=models.CASCADE, related_name="+"
    )
    resource_link_id = models.CharField(max_length=255)
    learner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    lineitem_url = models.URLField(max_length=1000)
    target = models.CharField(
        max_length=300, help_text="What the link opens: exercise:SLUG or lesson:SLUG."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["deployment", "resource_link_id", "learner"],
                name="lms_link_score_once",
            )
        ]
        indexes = [models.Index(fields=["sent_version", "version"])]

    def __str__(self) -> str:
        return f"{self.target} for {self.learner_id} -> {self.lineitem_url}"


class UsedNonce(models.Model):
    """A launch's nonce, once used: the same id_token never signs anyone in twice."""

    registration = models.ForeignKey(LtiRegistration, on_delete=models.CASCADE)
    nonce = models.CharField(max_length=255)
    used_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["registration", "nonce"], name="lms_nonce_once"
            )
        ]
