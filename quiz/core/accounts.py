"""Sign-up: the one way a learner account is created, with its name vetted."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from quiz.core.roles import LEARNER, assign_role
from quiz.core.usernames import (
    username_collides,
    username_is_reserved,
    username_mixes_scripts,
)

# One message for every name that cannot be had: taken, reserved, or looking
# like an existing or reserved name. See user_signup.
USERNAME_UNAVAILABLE = "This username is not available. Please choose another one."
USERNAME_MIXED_SCRIPTS = (
    "Use letters from one alphabet only: this username mixes scripts "
    "(for example Latin and Cyrillic), so it could pass for someone else's."
)
# Serialises sign-ups on PostgreSQL so two look-alike names cannot both pass.
_SIGNUP_LOCK_ID = 0x51676E7570


def user_signup(*, username: str, password: str, email: str = ""):
    """Create a learner account (new users are always learners).

    Every sign-up path goes through here, so this is where names are vetted:
    a name that mixes scripts is refused with its own message (that says
    nothing about other accounts); a name that is taken, reserved, or has
    the same Unicode skeleton as an existing user's name gets one generic
    USERNAME_UNAVAILABLE message. Why generic: "already taken" would let
    anyone test which usernames exist (the first half of a password-guessing
    attack); with one message for taken, reserved and look-alike names the
    answer no longer says that this exact account exists. Raises
    django.core.exceptions.ValidationError with code "username".
    """
    User = get_user_model()
    username = User.normalize_username(username)
    if username_mixes_scripts(username):
        raise ValidationError(USERNAME_MIXED_SCRIPTS, code="username")
    try:
        with transaction.atomic():
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_xact_lock(%s)", [_SIGNUP_LOCK_ID]
                    )
            if username_is_reserved(username) or username_collides(
                username, User.objects.values_list("username", flat=True).iterator()
            ):
                raise ValidationError(USERNAME_UNAVAILABLE, code="username")
            user = User.objects.create_user(
                username=username, password=password, email=email
            )
            assign_role(user, LEARNER)
    except IntegrityError:  # the same name, created by another path meanwhile
        raise ValidationError(USERNAME_UNAVAILABLE, code="username") from None
    return user
