"""The token endpoint: a token for a password, and its revocation."""

from __future__ import annotations

from django.contrib.auth import authenticate
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response

from quiz.core import login_guard
from quiz.core.api import serializers as s
from quiz.core.api import tokens
from quiz.core.api.auth import ExpiringTokenAuthentication
from quiz.core.api.base import ApiView


class LoginLockedOut(APIException):
    """429 for a username or IP the log-in guard locked out (Retry-After set)."""

    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked_out"

    def __init__(self, wait: int):
        super().__init__(login_guard.lockout_message(wait))
        self.wait = wait


class TokenView(ApiView):
    """POST: a token for a username and password (throttled by django-axes).
    DELETE: revoke the token the request authenticates with."""

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
        summary="Get an API token for a username and password",
    )
    def post(self, request):
        data = s.TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request, **data.validated_data)
        if login_guard.login_is_locked(request):
            raise LoginLockedOut(
                login_guard.retry_after_seconds(request, data.validated_data)
            )
        if user is None or not user.is_active:
            raise ValidationError(
                {"detail": "Unable to log in with these credentials."}
            )
        login_guard.login_succeeded(request, user)
        token = tokens.token_issue(user)
        return Response(
            {"token": token.key, "expires_at": tokens.token_expires_at(token)}
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
