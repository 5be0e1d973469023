"""Serializers of the token endpoints."""

from __future__ import annotations

from rest_framework import serializers

from quiz.core.api.scopes import SCOPES


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=128, style={"input_type": "password"})
    name = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        help_text="Which client this token is for, e.g. 'course on my-laptop' "
        "(listed at GET /api/v1/auth/tokens/).",
    )
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=SCOPES),
        required=False,
        allow_empty=False,
        max_length=len(SCOPES),
        help_text="What the token may do, one or more of: learn (your "
        "exercises, submissions, quizzes, progress), teach (instructors: "
        "cohorts, assignments, quizzes, results, regrades), manage-tokens "
        '(list and revoke your tokens). Default: ["learn"].',
    )


class TokenResponseSerializer(serializers.Serializer):
    token = serializers.CharField()
    expires_at = serializers.DateTimeField()
    id = serializers.IntegerField(help_text="For DELETE /api/v1/auth/tokens/{id}/.")
    name = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())


class TokenListSerializer(serializers.Serializer):
    """One of the user's tokens, never its key (only its first characters)."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The key's first characters.")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField()
    scopes = serializers.ListField(
        child=serializers.CharField(), help_text="What the token may do."
    )
    current = serializers.BooleanField(
        help_text="Whether this request authenticated with this token."
    )
