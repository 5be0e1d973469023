"""Writes for cohorts: create one, join it with a code or link, remove a member."""

from __future__ import annotations

import secrets

from django.db import IntegrityError, transaction
from django.urls import reverse

from teaching.models import Cohort, CohortMembership

# No 0/O, 1/I/L: codes are read aloud and typed from slides.
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
JOIN_CODE_LENGTH = 8
NAME_MAX_LENGTH = Cohort._meta.get_field("name").max_length
_CREATE_TRIES = 5


class CohortError(ValueError):
    """The request cannot be carried out; the message is for the person asking."""


def join_code_generate() -> str:
    """A random code (31^8, about 8.5e11 possibilities) from `secrets`."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def join_code_normalize(raw: str) -> str:
    """What a person types ("  abcd efgh ") into the stored form ("ABCDEFGH")."""
    return "".join(str(raw).split()).upper()


def join_url(request, cohort: Cohort) -> str:
    """The link that opens the cohort's join page (what an instructor shares)."""
    return request.build_absolute_uri(reverse("cohort-join", args=[cohort.join_code]))


def cohort_create(*, owner, name: str) -> Cohort:
    """Create a cohort with a fresh join code, retrying on the rare collision."""
    name = " ".join(str(name).split())
    if not name:
        raise CohortError("Give the cohort a name.")
    if len(name) > NAME_MAX_LENGTH:
        raise CohortError(f"A cohort name has at most {NAME_MAX_LENGTH} characters.")
    for _ in range(_CREATE_TRIES):
        try:
            with transaction.atomic():
                return Cohort.objects.create(
                    owner=owner, name=name, join_code=join_code_generate()
                )
        except IntegrityError:
            continue
    raise CohortError("Could not find a free join code; please try again.")


def cohort_join(*, cohort: Cohort, user) -> tuple[CohortMembership, bool]:
    """Add `user` to `cohort`; joining twice is harmless. Returns (row, created)."""
    if cohort.owner_id == user.pk:
        raise CohortError("You own this cohort; share its link with your learners.")
    with transaction.atomic():
        return CohortMembership.objects.get_or_create(cohort=cohort, user=user)


def member_remove(*, cohort: Cohort, user_id: int) -> bool:
    """Take a learner out of a cohort (their own work is kept). False if absent."""
    deleted, _ = CohortMembership.objects.filter(
        cohort=cohort, user_id=user_id
    ).delete()
    return deleted > 0
