"""REST API v1: one thin view per operation; logic lives in services/selectors."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from grader import selectors, services
from grader.api import serializers as s
from grader.api.parsers import BoundedJSONParser
from grader.models import Exercise, Submission


class ApiView(APIView):
    parser_classes = [BoundedJSONParser]


class TokenView(ApiView):
    permission_classes = [AllowAny]
    authentication_classes = []

    @extend_schema(
        request=s.TokenRequestSerializer,
        responses={
            200: s.TokenResponseSerializer,
            400: OpenApiResponse(description="Bad credentials"),
        },
        summary="Get an API token for a username and password",
    )
    def post(self, request):
        data = s.TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        user = authenticate(request, **data.validated_data)
        if user is None or not user.is_active:
            raise ValidationError(
                {"detail": "Unable to log in with these credentials."}
            )
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


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
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "submissions"

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
