"""Audit trail: who changed which authored record, when, and how."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class AuditEntry(models.Model):
    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"

    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="audit_entries",
        help_text="Empty for changes made by a command such as load_content.",
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    model = models.CharField(max_length=100, help_text="app_label.ModelName")
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    changes = models.JSONField(
        default=dict, blank=True, help_text="{field: [old, new]} for updates."
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["model", "object_id"])]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.action} {self.model} {self.object_repr}"


def default_token_scopes() -> list[str]:
    """What a token may do when its request names no scopes, and what every
    token issued before scopes existed got (migration quiz 0012): `learn`,
    all a learner's client needs (docs/security.md, "Token scopes")."""
    return [ApiToken.Scope.LEARN.value]


class ApiToken(models.Model):
    """One API client's token (`course login` on one machine, a script, ...).

    Only the key's SHA-256 is stored, with its first characters so a person
    can tell their tokens apart; each client is logged out on its own. Its
    scopes bound what it may do (quiz.core.api.scopes); a browser session is
    not bound by them.
    """

    class Scope(models.TextChoices):
        LEARN = "learn", "learn: your exercises, submissions, quizzes, progress"
        TEACH = "teach", "teach: cohorts, assignments, quizzes, results, regrades"
        MANAGE_TOKENS = "manage-tokens", "manage-tokens: list and revoke tokens"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, help_text="Which client holds it.")
    prefix = models.CharField(max_length=8, help_text="The key's first characters.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    scopes = models.JSONField(
        default=default_token_scopes,
        help_text="What it may do: a list of learn, teach, manage-tokens.",
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
