"""Token authentication that refuses expired tokens, with details that say why."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication, get_authorization_header

from quiz.core.api.tokens import (
    token_for_key,
    token_is_expired,
    token_revoke,
    token_touch,
)

INVALID = "Invalid or revoked token. Get a new one with POST /api/v1/auth/token/."
EXPIRED = "This token has expired. Get a new one with POST /api/v1/auth/token/."


class ExpiringTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`, one of the user's ApiTokens (request.auth);
    a token past API_TOKEN_TTL_HOURS is refused.

    It comes first in DEFAULT_AUTHENTICATION_CLASSES so that a bad token is
    answered 401 (DRF takes WWW-Authenticate from the first class). Requests
    without a token header keep the session's 403, as before.
    """

    def authenticate_credentials(self, key):
        token = token_for_key(key)
        if token is None:
            raise exceptions.AuthenticationFailed(INVALID)
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if token_is_expired(token):
            token_revoke(token)
            raise exceptions.AuthenticationFailed(EXPIRED)
        token_touch(token)
        return token.user, token

    def authenticate_header(self, request):
        auth = get_authorization_header(request).split()
        if auth and auth[0].lower() == self.keyword.lower().encode():
            return self.keyword
        return None
