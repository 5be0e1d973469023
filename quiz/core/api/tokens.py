"""API tokens: issued for a password, valid API_TOKEN_TTL_HOURS, revocable.

DRF's Token model (one token per user) is kept; a token older than the TTL
is refused and replaced on the next POST /api/v1/auth/token/, DELETE on
that URL revokes it, and a password change (any path that saves the user:
set_password + save, the admin, the password views) deletes it, so a stolen
token dies with the old password.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token


def token_ttl() -> timedelta:
    return timedelta(hours=settings.API_TOKEN_TTL_HOURS)


def token_expires_at(token: Token) -> datetime:
    return token.created + token_ttl()


def token_is_expired(token: Token) -> bool:
    return timezone.now() >= token_expires_at(token)


@transaction.atomic
def token_issue(user) -> Token:
    """The user's live token, or a new one if it has none or it expired."""
    Token.objects.filter(user=user, created__lte=timezone.now() - token_ttl()).delete()
    token, _ = Token.objects.get_or_create(user=user)
    return token


def token_revoke(token: Token) -> None:
    Token.objects.filter(pk=token.pk).delete()


def tokens_revoke_for(user) -> int:
    count, _ = Token.objects.filter(user=user).delete()
    return count


def _remember_password_change(sender, instance, update_fields=None, **kwargs):
    """pre_save: note whether this save changes the stored password hash."""
    instance._api_password_changed = False
    if instance.pk is None or (update_fields and "password" not in update_fields):
        return
    stored = (
        sender._default_manager.filter(pk=instance.pk)
        .values_list("password", flat=True)
        .first()
    )
    instance._api_password_changed = stored is not None and stored != instance.password


def _revoke_on_password_change(sender, instance, **kwargs):
    """post_save: a new password invalidates the old API token."""
    if getattr(instance, "_api_password_changed", False):
        tokens_revoke_for(instance)
        instance._api_password_changed = False


def connect_signals() -> None:
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_save, pre_save

    User = get_user_model()
    pre_save.connect(_remember_password_change, sender=User, dispatch_uid="api-pw")
    post_save.connect(_revoke_on_password_change, sender=User, dispatch_uid="api-pw")
