"""The progress matrix over the API: the same matrix as the page and the CSV."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from quiz.teaching.access import COHORT_API_ERRORS, CohortApiView
from quiz.teaching.matrix.build import UnknownSection, progress_matrix_for


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
            **COHORT_API_ERRORS,
        },
        summary="A cohort's progress matrix (learners x lessons)",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        try:
            matrix = progress_matrix_for(cohort=cohort, query=request.query_params)
        except UnknownSection as exc:
            raise ValidationError({"section": [str(exc)]}) from None
        return Response(MatrixSerializer(matrix).data)
