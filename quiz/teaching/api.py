"""Cohort API for instructors: their cohorts, submissions and analytics.

The same selectors as the pages, so the numbers are the same; access as the
pages (quiz.teaching.access). The progress matrix's endpoint is
quiz.teaching.matrix.api.
"""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from quiz.core.params import BadNumber, whole_number
from quiz.teaching import selectors as sel
from quiz.teaching.access import COHORT_API_ERRORS, CohortApiView
from quiz.teaching.cohort_analytics import cohort_analytics
from quiz.teaching.cohorts import join_url
from quiz.teaching.models import Cohort

SUBMISSIONS_MAX_LIMIT = 1000


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
        return join_url(self.context["request"], obj)


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


class CohortListView(CohortApiView):
    @extend_schema(
        responses={200: CohortSerializer(many=True), 403: COHORT_API_ERRORS[403]},
        summary="List the cohorts you own (a superuser sees all)",
        tags=["cohorts"],
    )
    def get(self, request):
        cohorts = sel.cohort_list(user=request.user)
        return Response(
            CohortSerializer(cohorts, many=True, context={"request": request}).data
        )


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
            **COHORT_API_ERRORS,
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
        responses={200: AnalyticsSerializer, **COHORT_API_ERRORS},
        summary="Per-exercise and per-question analytics of a cohort",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        return Response(AnalyticsSerializer(cohort_analytics(cohort=cohort)).data)
