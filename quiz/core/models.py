"""Audit trail: who changed which authored record, when, and how."""

from django.conf import settings
from django.db import models


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
