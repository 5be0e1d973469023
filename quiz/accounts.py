"""Account writes: sign-up and the demo accounts for local development."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from quiz.roles import ADMIN, INSTRUCTOR, LEARNER, assign_role

DEMO_COHORT_CODE = "DEMOCOHORT"
DEMO_ACCOUNTS = (
    ("learner", "learner-demo-pass", LEARNER),
    ("instructor", "instructor-demo-pass", INSTRUCTOR),
    ("admin", "admin-demo-pass", ADMIN),
)


@transaction.atomic
def user_signup(*, username: str, password: str, email: str = ""):
    """Create a learner account (new users are always learners)."""
    user = get_user_model().objects.create_user(
        username=username, password=password, email=email
    )
    assign_role(user, LEARNER)
    return user


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
    from quiz.models import Cohort, CohortMembership

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
