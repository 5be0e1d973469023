"""Cohorts: an instructor's group of learners, joined with a code."""

from django.conf import settings
from django.db import models


class Cohort(models.Model):
    name = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="cohorts_owned"
    )
    join_code = models.CharField(
        max_length=16, unique=True, help_text="Learners join with this code or link."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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
        ordering = ["joined_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["cohort", "user"], name="cohort_member_once"
            )
        ]
