"""The demo learner, instructor and admin, and the instructor's demo cohort."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from quiz.core.roles import ADMIN, INSTRUCTOR, LEARNER, assign_role
from teaching.models import Cohort, CohortMembership

DEMO_COHORT_CODE = "DEMOCOHORT"
DEMO_ACCOUNTS = (
    ("learner", "learner-demo-pass", LEARNER),
    ("instructor", "instructor-demo-pass", INSTRUCTOR),
    ("admin", "admin-demo-pass", ADMIN),
)


@transaction.atomic
def demo_accounts_create() -> None:
    """Create or reset the three demo users (idempotent)."""
    User = get_user_model()
    for username, password, role in DEMO_ACCOUNTS:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_superuser = role == ADMIN
        user.save()
        assign_role(user, role)
    _demo_cohort_create()


def _demo_cohort_create() -> None:
    """The demo instructor's cohort, with the demo learner in it."""
    User = get_user_model()
    cohort, _ = Cohort.objects.get_or_create(
        join_code=DEMO_COHORT_CODE,
        defaults={
            "name": "Demo cohort",
            "owner": User.objects.get(username="instructor"),
        },
    )
    CohortMembership.objects.get_or_create(
        cohort=cohort, user=User.objects.get(username="learner")
    )
