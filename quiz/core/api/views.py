"""The token endpoints: a token for a password, the list of a user's tokens
(one per client), and revoking one."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response

from quiz.core import login_guard
from quiz.core.api import serializers as s
from quiz.core.api import tokens
from quiz.core.api.auth import ExpiringTokenAuthentication
from quiz.core.api.base import ApiView
from quiz.core.api.scopes import ANY_TOKEN, MANAGE_TOKENS
from quiz.core.models import ApiToken


class LoginLockedOut(APIException):
    """429 for a username or IP the log-in guard locked out (Retry-After set)."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self, wait: int):
        super().__init__(login_guard.lockout_message(wait))
        self.wait = wait


class TokenView(ApiView):
    """POST: a new token for a username and password, for one client (throttled
    by django-axes), with the scopes asked for (`learn` if none). DELETE:
    revoke the token the request authenticates with (that client's alone),
    whatever its scopes."""

    # POST takes no token (a password); any token may log itself out.
    token_scopes = {"POST": ANY_TOKEN, "DELETE": ANY_TOKEN}

    def _revoking(self) -> bool:
        # The schema generator asks before it sets a request: show the token.
        return getattr(self.request, "method", "DELETE") == "DELETE"

    def get_authenticators(self):
        # POST must work even with an expired token still in the headers.
        return [ExpiringTokenAuthentication()] if self._revoking() else []

    def get_authenticate_header(self, request):
        return "Token"  # DELETE without a valid token: 401, not 403

    def get_permissions(self):
        return [IsAuthenticated()] if self._revoking() else [AllowAny()]

    @extend_schema(
        request=s.TokenRequestSerializer,
        responses={
            200: s.TokenResponseSerializer,
            400: OpenApiResponse(description="Bad credentials"),
            429: OpenApiResponse(
                description="Too many failed attempts for this username or IP; "
                "see Retry-After"
            ),
        },
        summary="Get a new API token for one client, for a username and password",
    )
    def post(self, request):
        data = s.TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        credentials = {
            key: data.validated_data[key] for key in ("username", "password")
        }
        user = authenticate(request, **credentials)
        if login_guard.login_is_locked(request):
            raise LoginLockedOut(login_guard.retry_after_seconds(request, credentials))
        if user is None or not user.is_active:
            raise ValidationError(
                {"detail": "Unable to log in with these credentials."}
            )
        login_guard.login_succeeded(request, user)
        token, key = tokens.token_issue(
            user=user,
            name=data.validated_data.get("name", ""),
            scopes=data.validated_data.get("scopes"),
        )
        return Response(
            {
                "token": key,
                "expires_at": tokens.token_expires_at(token),
                "id": token.pk,
                "name": token.name,
                "scopes": token.scopes,
            }
        )

    @extend_schema(
        request=None,
        responses={
            204: OpenApiResponse(description="The token is revoked"),
            401: OpenApiResponse(description="No valid token"),
        },
        summary="Revoke the API token this request authenticates with",
    )
    def delete(self, request):
        tokens.token_revoke(request.auth)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _token_row(token, *, current) -> dict:
    return {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
        "expires_at": tokens.token_expires_at(token),
        "scopes": token.scopes,
        "current": current is not None and token.pk == current.pk,
    }


def _current_token(request):
    return request.auth if isinstance(request.auth, ApiToken) else None


class TokenListView(ApiView):
    """The signed-in user's tokens, one per client (a session, or a token
    with the manage-tokens scope)."""

    token_scopes = MANAGE_TOKENS

    @extend_schema(
        responses=s.TokenListSerializer(many=True),
        summary="List your API tokens, one per client, newest first",
    )
    def get(self, request):
        current = _current_token(request)
        rows = [
            _token_row(token, current=current)
            for token in tokens.token_list(user=request.user)
        ]
        return Response(s.TokenListSerializer(rows, many=True).data)


class TokenDetailView(ApiView):
    """Revoke one token (a session, or a token with the manage-tokens scope)."""

    token_scopes = MANAGE_TOKENS

    @extend_schema(
        request=None,
        responses={
            204: OpenApiResponse(description="The token is revoked"),
            404: OpenApiResponse(description="No such token among yours"),
        },
        summary="Revoke one of your API tokens by its id (log out that client)",
    )
    def delete(self, request, token_id: int):
        try:
            tokens.token_revoke_by_id(user=request.user, token_id=token_id)
        except ApiToken.DoesNotExist:
            raise NotFound(f"You have no token with id {token_id}.") from None
        return Response(status=status.HTTP_204_NO_CONTENT)
