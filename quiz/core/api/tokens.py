"""API tokens: one per client, issued for a password, valid API_TOKEN_TTL_HOURS.

Each POST /api/v1/auth/token/ issues a new token under the name the client
gives (`course login --name`), so logging out one machine (DELETE on that
URL) leaves the others logged in; GET /api/v1/auth/tokens/ (a session or a
manage-tokens token) and the account page list them and revoke any one. Each
token holds the scopes it was issued with (quiz.core.api.scopes). Only a
SHA-256 of each key is stored. A token older than the TTL is refused and
deleted. A password change (any path that saves the user: set_password +
save, the admin, the password views) deletes every token of the user, so a
stolen token dies with the old password.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from quiz.core.api.scopes import scopes_clean
from quiz.core.models import ApiToken

DEFAULT_NAME = "API token"
# A script that logs in on every run must not grow the list without end:
# past this many live tokens the least recently used one goes.
MAX_TOKENS_PER_USER = 50
# last_used_at is a write; once a minute per token is enough to read it by.
LAST_USED_EVERY = timedelta(minutes=1)


def token_ttl() -> timedelta:
    return timedelta(hours=settings.API_TOKEN_TTL_HOURS)


def token_expires_at(token: ApiToken) -> datetime:
    return token.created_at + token_ttl()


def token_is_expired(token: ApiToken) -> bool:
    return timezone.now() >= token_expires_at(token)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@transaction.atomic
def token_issue(
    *, user, name: str = "", scopes: Iterable[str] | None = None
) -> tuple[ApiToken, str]:
    """A new token for one client, allowed `scopes` (quiz.core.api.scopes;
    None: the default, `learn`); returns it with its key (shown once)."""
    scopes = scopes_clean(scopes)
    live = ApiToken.objects.filter(user=user)
    live.filter(created_at__lte=timezone.now() - token_ttl()).delete()
    stale = live.order_by(
        F("last_used_at").desc(nulls_last=True), "-created_at"
    ).values_list("pk", flat=True)
    ApiToken.objects.filter(pk__in=list(stale[MAX_TOKENS_PER_USER - 1 :])).delete()
    key = secrets.token_hex(20)
    token = ApiToken.objects.create(
        user=user,
        name=name.strip() or DEFAULT_NAME,
        prefix=key[:8],
        key_hash=key_hash(key),
        scopes=scopes,
    )
    return token, key


def token_for_key(key: str) -> ApiToken | None:
    return (
        ApiToken.objects.select_related("user").filter(key_hash=key_hash(key)).first()
    )


def token_touch(token: ApiToken) -> None:
    """Note the token's use (at most once a LAST_USED_EVERY)."""
    now = timezone.now()
    if token.last_used_at and now - token.last_used_at < LAST_USED_EVERY:
        return
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now


def token_list(*, user) -> list[ApiToken]:
    """The user's live tokens, newest first."""
    return list(
        ApiToken.objects.filter(
            user=user, created_at__gt=timezone.now() - token_ttl()
        ).order_by("-created_at", "-pk")
    )


def token_revoke(token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk).delete()


def token_revoke_by_id(*, user, token_id: int) -> ApiToken:
    """Revoke one of the user's tokens; ApiToken.DoesNotExist if not theirs."""
    token = ApiToken.objects.get(pk=token_id, user=user)
    token.delete()
    return token


def tokens_revoke_for(user) -> int:
    count, _ = ApiToken.objects.filter(user=user).delete()
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
    """post_save: a new password invalidates every API token of the user."""
    if getattr(instance, "_api_password_changed", False):
        tokens_revoke_for(instance)
        instance._api_password_changed = False


def connect_signals() -> None:
    from django.contrib.auth import get_user_model
    from django.db.models.signals import post_save, pre_save

    User = get_user_model()
    pre_save.connect(_remember_password_change, sender=User, dispatch_uid="api-pw")
    post_save.connect(_revoke_on_password_change, sender=User, dispatch_uid="api-pw")
