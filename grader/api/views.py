"""REST API v1: one thin view per operation; logic lives in services/selectors."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, Throttled, ValidationError
from rest_framework.response import Response

from grader import selectors, services
from grader.api import serializers as s
from grader.api.gradescope import submission_gradescope
from grader.models import Exercise, Submission
from quiz.core.api.base import ApiView


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
        return Response(submission_gradescope(submission))
