"""REST API v1: one thin view per operation; logic lives in services/selectors."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import (
    APIException,
    NotFound,
    Throttled,
    ValidationError,
)
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from grader import selectors, services
from grader.api import serializers as s
from grader.api import tokens
from grader.api.auth import ExpiringTokenAuthentication
from grader.api.parsers import BoundedJSONParser
from grader.models import Exercise, Submission
from quiz import login_guard


class ApiView(APIView):
    parser_classes = [BoundedJSONParser]


class LoginLockedOut(APIException):
    """429 for a username or IP locked out by quiz.login_guard (Retry-After set)."""

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


def _exercise_or_404(slug: str) -> Exercise:
    try:
        return selectors.exercise_get(slug=slug)
    except Exercise.DoesNotExist:
        raise NotFound(f"No exercise named {slug!r}.") from None


class ExerciseListView(ApiView):
    @extend_schema(
        responses=s.ExerciseListSerializer(many=True), summary="List exercises"
    )
    def get(self, request):
        items = selectors.exercise_list()
        return Response(
            s.ExerciseListSerializer(
                items, many=True, context={"request": request}
            ).data
        )


class ExerciseDetailView(ApiView):
    @extend_schema(responses=s.ExerciseDetailSerializer, summary="Describe an exercise")
    def get(self, request, slug: str):
        exercise = _exercise_or_404(slug)
        return Response(
            s.ExerciseDetailSerializer(exercise, context={"request": request}).data
        )


class SubmissionCreateView(ApiView):
    # Throttling lives in services.submission_create, shared with the HTML form.

    @extend_schema(
        request=s.SubmissionCreateSerializer,
        responses={
            202: s.SubmissionCreatedSerializer,
            400: OpenApiResponse(description="Invalid code"),
            404: OpenApiResponse(description="Unknown exercise"),
            413: OpenApiResponse(description="Body too large"),
            429: OpenApiResponse(description="Too many submissions"),
        },
        summary="Submit code for grading",
    )
    def post(self, request, slug: str):
        exercise = _exercise_or_404(slug)
        data = s.SubmissionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            submission = services.submission_create(
                user=request.user, exercise=exercise, code=data.validated_data["code"]
            )
        except services.SubmissionThrottled as exc:
            # DRF adds the Retry-After header and "Expected available in N s".
            raise Throttled(
                wait=exc.retry_after, detail=f"Request was throttled: {exc}."
            ) from None
        except services.SubmissionRejected as exc:
            raise ValidationError({"code": [str(exc)]}) from None
        url = request.build_absolute_uri(f"/api/v1/submissions/{submission.pk}/")
        return Response(
            {"id": submission.pk, "status": submission.status, "url": url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )


def _submission_or_404(request, submission_id) -> Submission:
    try:
        return selectors.submission_get(user=request.user, submission_id=submission_id)
    except (Submission.DoesNotExist, DjangoValidationError):
        raise NotFound("No such submission.") from None


class SubmissionDetailView(ApiView):
    @extend_schema(
        responses=s.SubmissionSerializer, summary="A submission's status and results"
    )
    def get(self, request, submission_id):
        submission = _submission_or_404(request, submission_id)
        submission.queue_position = selectors.submission_queue_position(submission)
        return Response(s.SubmissionSerializer(submission).data)


class SubmissionGradescopeView(ApiView):
    @extend_schema(
        responses=s.GradescopeResultSerializer,
        summary="A submission's result in Gradescope's results.json shape",
    )
    def get(self, request, submission_id):
        submission = _submission_or_404(request, submission_id)
        return Response(selectors.submission_gradescope(submission))
