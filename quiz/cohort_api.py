"""Cohort API for instructors: their cohorts, progress, submissions, analytics.

The same selectors as the pages, so the numbers are the same. Only
instructors and superusers get in (others: 403); a cohort that is not the
caller's is a 404, exactly as if it did not exist.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.response import Response

from grader.api.views import ApiView
from quiz import cohort_selectors as sel
from quiz.analytics import cohort_analytics
from quiz.models import Cohort
from quiz.params import BadNumber, whole_number

SUBMISSIONS_MAX_LIMIT = 1000


class IsInstructor(BasePermission):
    message = "Only instructors can use the cohort API."

    def has_permission(self, request, view) -> bool:
        return sel.user_can_teach(request.user)


# Serializers (output only) ---------------------------------------------------


class CohortSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    join_code = serializers.CharField()
    join_url = serializers.SerializerMethodField()
    member_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()

    def get_join_url(self, obj: Cohort) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("cohort-join", args=[obj.join_code])
        )


class MatrixLessonSerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    section = serializers.CharField(source="section_slug")
    checks_total = serializers.IntegerField()
    exercises_total = serializers.IntegerField()


class MatrixCellSerializer(serializers.Serializer):
    lesson = serializers.CharField(source="lesson.slug")
    read = serializers.BooleanField()
    checks_right = serializers.IntegerField()
    exercises_passed = serializers.IntegerField()


class MatrixRowSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="user_id")
    username = serializers.CharField()
    lessons_read = serializers.IntegerField()
    checks_right = serializers.IntegerField()
    exercises_passed = serializers.IntegerField()
    cells = MatrixCellSerializer(many=True)


class MatrixSerializer(serializers.Serializer):
    section = serializers.CharField(allow_null=True)
    sort = serializers.CharField()
    lessons = MatrixLessonSerializer(many=True)
    learners = MatrixRowSerializer(many=True, source="rows")


class FailedCheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    diagnosis = serializers.CharField(allow_null=True)
    message = serializers.CharField(allow_blank=True)


class CohortSubmissionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    learner = serializers.CharField(source="user.username")
    learner_id = serializers.IntegerField(source="user_id")
    exercise = serializers.CharField(source="exercise.slug")
    status = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    code = serializers.CharField()
    failed_checks = serializers.SerializerMethodField()

    @extend_schema_field(FailedCheckSerializer(many=True))
    def get_failed_checks(self, obj) -> list[dict]:
        return FailedCheckSerializer(sel.failed_checks(obj), many=True).data


class DiagnosisSerializer(serializers.Serializer):
    diagnosis = serializers.CharField()
    count = serializers.IntegerField(help_text="Failed submissions reporting it.")
    learners = serializers.IntegerField()


class ExerciseStatsSerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    lesson = serializers.CharField(allow_null=True)
    attempts = serializers.IntegerField(
        help_text="Graded submissions (passed or failed)."
    )
    learners = serializers.IntegerField()
    learners_passed = serializers.IntegerField()
    pass_rate = serializers.FloatField(
        allow_null=True, help_text="learners_passed / learners; null if nobody tried."
    )
    median_attempts_to_pass = serializers.FloatField(allow_null=True)
    diagnoses = DiagnosisSerializer(many=True)


class QuestionStatsSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    lesson = serializers.CharField()
    prompt = serializers.CharField()
    kind = serializers.CharField()
    attempts = serializers.IntegerField()
    learners = serializers.IntegerField()
    right = serializers.IntegerField()
    percent_right = serializers.FloatField(help_text="Difficulty: lower is harder.")


class AnalyticsSerializer(serializers.Serializer):
    exercises = ExerciseStatsSerializer(many=True)
    questions = QuestionStatsSerializer(many=True)


# Views -----------------------------------------------------------------------


class CohortApiView(ApiView):
    permission_classes = [IsAuthenticated, IsInstructor]

    def cohort(self, request, cohort_id) -> Cohort:
        try:
            return sel.cohort_get(user=request.user, cohort_id=cohort_id)
        except Cohort.DoesNotExist:
            raise NotFound("No such cohort.") from None


_ERRORS = {
    403: OpenApiResponse(description="Not an instructor"),
    404: OpenApiResponse(description="Not one of your cohorts"),
}


class CohortListView(CohortApiView):
    @extend_schema(
        responses={200: CohortSerializer(many=True), 403: _ERRORS[403]},
        summary="List the cohorts you own (a superuser sees all)",
        tags=["cohorts"],
    )
    def get(self, request):
        cohorts = sel.cohort_list(user=request.user)
        return Response(
            CohortSerializer(cohorts, many=True, context={"request": request}).data
        )


class CohortMatrixView(CohortApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter("section", str, description="Only this section's lessons"),
            OpenApiParameter(
                "sort",
                str,
                description="learner, read, checks, exercises or a lesson slug; "
                "a leading '-' reverses",
            ),
        ],
        responses={
            200: MatrixSerializer,
            400: OpenApiResponse(description="Unknown section"),
            **_ERRORS,
        },
        summary="A cohort's progress matrix (learners x lessons)",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        try:
            matrix = sel.progress_matrix(
                cohort=cohort,
                section=request.query_params.get("section"),
                sort=request.query_params.get("sort", "learner"),
            )
        except sel.UnknownSection as exc:
            raise ValidationError({"section": [str(exc)]}) from None
        return Response(MatrixSerializer(matrix).data)


class CohortSubmissionsView(CohortApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter("exercise", str, description="Only this exercise (slug)"),
            OpenApiParameter("learner", int, description="Only this learner (id)"),
            OpenApiParameter(
                "limit",
                int,
                description=f"At most this many (<= {SUBMISSIONS_MAX_LIMIT})",
            ),
        ],
        responses={
            200: CohortSubmissionSerializer(many=True),
            400: OpenApiResponse(description="Bad filter"),
            **_ERRORS,
        },
        summary="Submissions of a cohort's learners, newest first",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        qs = sel.cohort_submissions(cohort=cohort)
        params = request.query_params
        if params.get("exercise"):
            qs = qs.filter(exercise__slug=params["exercise"])
        limit = _int_param(params, "limit", SUBMISSIONS_MAX_LIMIT)
        learner = _int_param(params, "learner", None)
        if learner is not None:
            qs = qs.filter(user_id=learner)
        if not 1 <= limit <= SUBMISSIONS_MAX_LIMIT:
            raise ValidationError(
                {"limit": [f"Use a number from 1 to {SUBMISSIONS_MAX_LIMIT}."]}
            )
        return Response(CohortSubmissionSerializer(qs[:limit], many=True).data)


def _int_param(params, name: str, default):
    """A whole number in ASCII digits within bigint, else a 400 naming `name`."""
    try:
        value = whole_number(params.get(name))
    except BadNumber as exc:
        raise ValidationError({name: [str(exc)]}) from None
    return default if value is None else value


class CohortAnalyticsView(CohortApiView):
    @extend_schema(
        responses={200: AnalyticsSerializer, **_ERRORS},
        summary="Per-exercise and per-question analytics of a cohort",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        return Response(AnalyticsSerializer(cohort_analytics(cohort=cohort)).data)
