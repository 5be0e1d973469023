"""Assignments API: CRUD, the gradebook (JSON, CSV, Canvas), extensions, overrides.

Each view answers only for the assignment's (or cohort's) owner and for
superusers (quiz.teaching.access); anyone else gets 404, a learner 403.
Writes go through quiz.teaching.assignments.services, as the pages do.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import renderers, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response

from quiz.core.api.negotiation import FormatFirstNegotiation
from quiz.core.params import BadNumber, whole_number
from quiz.teaching import selectors as sel
from quiz.teaching.access import COHORT_API_ERRORS, CohortApiView
from quiz.teaching.assignments import gradebook, services
from quiz.teaching.assignments.scoring import LearnerScore
from quiz.teaching.csv_files import csv_response
from quiz.teaching.models import Assignment, AssignmentItem

# Serializers -----------------------------------------------------------------


class ItemInSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=AssignmentItem.Kind.values)
    slug = serializers.SlugField(
        max_length=80,
        help_text="An exercise's or lesson's slug; a quiz's id (text or number), "
        "a quiz of the assignment's cohort.",
    )
    weight = serializers.FloatField(default=1.0, help_text="Points (> 0).")


class AssignmentInSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    opens_at = serializers.DateTimeField(help_text="ISO 8601; stored in UTC.")
    due_at = serializers.DateTimeField(help_text="ISO 8601; stored in UTC.")
    late_policy = serializers.ChoiceField(
        choices=Assignment.LatePolicy.values, default=Assignment.LatePolicy.NONE
    )
    penalty_per_day = serializers.FloatField(default=0.0, help_text="0-1")
    penalty_cap = serializers.FloatField(default=1.0, help_text="0-1")
    items = ItemInSerializer(many=True)


class AssignmentPatchSerializer(AssignmentInSerializer):
    archived = serializers.BooleanField(
        required=False, help_text="True archives it (it keeps its scores)."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


class ItemOutSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    slug = serializers.SerializerMethodField()
    weight = serializers.FloatField()

    def get_slug(self, obj) -> str:
        return obj.slug  # a quiz's id as text


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    cohort = serializers.IntegerField(source="cohort_id")
    title = serializers.CharField()
    opens_at = serializers.DateTimeField()
    due_at = serializers.DateTimeField()
    late_policy = serializers.CharField()
    penalty_per_day = serializers.FloatField()
    penalty_cap = serializers.FloatField()
    archived = serializers.SerializerMethodField()
    items = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()
    gradebook_url = serializers.SerializerMethodField()

    def get_archived(self, obj) -> bool:
        return obj.archived_at is not None

    @extend_schema_field(ItemOutSerializer(many=True))
    def get_items(self, obj) -> list[dict]:
        rows = obj.items.select_related("exercise", "lesson", "quiz")
        return ItemOutSerializer(rows, many=True).data

    def get_url(self, obj) -> str:
        return f"/api/v1/assignments/{obj.pk}/"

    def get_gradebook_url(self, obj) -> str:
        return f"/api/v1/assignments/{obj.pk}/gradebook/"


class CountedSerializer(serializers.Serializer):
    submission = serializers.CharField(source="submission_id", allow_null=True)
    attempt = serializers.IntegerField(
        source="attempt_id",
        allow_null=True,
        help_text="A quiz item's counted attempt (none for an average).",
    )
    at = serializers.DateTimeField(allow_null=True)
    raw = serializers.FloatField(help_text="Its own score, before lateness.")
    days_late = serializers.IntegerField()
    factor = serializers.FloatField(help_text="The share of credit it keeps.")


class ItemScoreSerializer(serializers.Serializer):
    item = serializers.IntegerField(source="item.pk")
    label = serializers.CharField(source="item.label")
    score = serializers.FloatField()
    attempted = serializers.BooleanField()
    late = serializers.BooleanField()
    overridden = serializers.SerializerMethodField()
    why = serializers.CharField()
    counted = CountedSerializer(allow_null=True)

    def get_overridden(self, obj) -> bool:
        return obj.override is not None


class LearnerScoreSerializer(serializers.Serializer):
    learner_id = serializers.IntegerField()
    learner = serializers.CharField(source="username")
    due_at = serializers.DateTimeField()
    extended = serializers.BooleanField()
    late = serializers.BooleanField()
    points = serializers.FloatField()
    possible = serializers.FloatField()
    score = serializers.FloatField(help_text="points / possible, 0-1")
    items = ItemScoreSerializer(many=True)


class GradebookSerializer(serializers.Serializer):
    assignment = AssignmentSerializer()
    learners = LearnerScoreSerializer(many=True)


class ExtensionInSerializer(serializers.Serializer):
    learner = serializers.CharField(help_text="A learner's id or username.")
    due_at = serializers.DateTimeField()


class ExtensionSerializer(serializers.Serializer):
    learner = serializers.CharField(source="learner.username")
    due_at = serializers.DateTimeField()


class OverrideInSerializer(serializers.Serializer):
    learner = serializers.CharField(help_text="A learner's id or username.")
    item = serializers.IntegerField(help_text="The item's id (see `items`).")
    score = serializers.FloatField(help_text="0-1")
    reason = serializers.CharField(allow_blank=True, trim_whitespace=True)


class OverrideSerializer(serializers.Serializer):
    learner = serializers.CharField(source="learner.username")
    item = serializers.IntegerField(source="item_id")
    score = serializers.FloatField()
    reason = serializers.CharField()
    set_by = serializers.CharField(source="set_by.username", allow_null=True)
    set_at = serializers.DateTimeField()


# Helpers ---------------------------------------------------------------------


def _assignment_or_404(request, assignment_id: int) -> Assignment:
    try:
        return sel.assignment_get(user=request.user, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise NotFound("No such assignment.") from None


def _specs(items: list[dict]) -> list[services.ItemSpec]:
    return [
        services.ItemSpec(i["kind"], i["slug"], i.get("weight", 1.0)) for i in items
    ]


def learner_named(value: str):
    """The user `value` names: an id (ASCII digits, at most a bigint: int()
    refuses 4,301 digits) or a username; a 400 naming `learner` if none."""
    users = get_user_model().objects
    learner = None
    try:
        pk = whole_number(value)
    except BadNumber:
        pk = None
    if pk is not None:
        learner = users.filter(pk=pk).first()
    learner = learner or users.filter(username=value).first()
    if learner is None:
        shown = value if len(value) <= 40 else value[:40] + "…"
        raise ValidationError({"learner": [f"No learner {shown!r}."]})
    return learner


def _invalid(exc: services.AssignmentError) -> ValidationError:
    return ValidationError({exc.field: [str(exc)]})


class CsvRenderer(renderers.BaseRenderer):
    """Lets `?format=csv` (and `canvas`) through negotiation; views return files."""

    media_type = "text/csv"
    format = "csv"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, bytes | str) else b""


class CanvasCsvRenderer(CsvRenderer):
    format = "canvas"


# Views -----------------------------------------------------------------------


class CohortAssignmentsView(CohortApiView):
    @extend_schema(
        responses={200: AssignmentSerializer(many=True), **COHORT_API_ERRORS},
        parameters=[
            OpenApiParameter("archived", bool, description="Archived ones instead")
        ],
        summary="A cohort's assignments",
        tags=["assignments"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        archived = request.query_params.get("archived") in ("1", "true", "yes")
        rows = gradebook.cohort_assignments(cohort=cohort, archived=archived)
        return Response(AssignmentSerializer(rows, many=True).data)

    @extend_schema(
        request=AssignmentInSerializer,
        responses={
            201: AssignmentSerializer,
            400: OpenApiResponse(description="Invalid assignment"),
            **COHORT_API_ERRORS,
        },
        summary="Create an assignment for a cohort",
        tags=["assignments"],
    )
    def post(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        data = AssignmentInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        try:
            assignment = services.assignment_create(
                cohort=cohort,
                actor=request.user,
                items=_specs(values.pop("items")),
                **values,
            )
        except services.AssignmentError as exc:
            raise _invalid(exc) from None
        return Response(
            AssignmentSerializer(assignment).data, status=status.HTTP_201_CREATED
        )


class AssignmentView(CohortApiView):
    @extend_schema(
        responses={200: AssignmentSerializer, **COHORT_API_ERRORS},
        summary="An assignment",
        tags=["assignments"],
    )
    def get(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        return Response(AssignmentSerializer(assignment).data)

    @extend_schema(
        request=AssignmentPatchSerializer,
        responses={
            200: AssignmentSerializer,
            400: OpenApiResponse(description="Invalid change"),
            **COHORT_API_ERRORS,
        },
        summary="Change an assignment (items replace the list; scores follow)",
        tags=["assignments"],
    )
    def patch(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        data = AssignmentPatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        items = values.pop("items", None)
        try:
            assignment = services.assignment_update(
                assignment=assignment,
                actor=request.user,
                items=None if items is None else _specs(items),
                **values,
            )
        except services.AssignmentError as exc:
            raise _invalid(exc) from None
        return Response(AssignmentSerializer(assignment).data)

    @extend_schema(
        responses={
            204: None,
            409: OpenApiResponse(description="It has scores: archive it instead"),
            **COHORT_API_ERRORS,
        },
        summary="Delete an assignment nobody has scores in",
        tags=["assignments"],
    )
    def delete(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        try:
            services.assignment_delete(assignment=assignment, actor=request.user)
        except services.AssignmentError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class AssignmentGradebookView(CohortApiView):
    renderer_classes = [renderers.JSONRenderer, CsvRenderer, CanvasCsvRenderer]
    content_negotiation_class = FormatFirstNegotiation

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=["json", "csv", "canvas"],
                description="csv: one row per learner; canvas: Canvas's import",
            )
        ],
        responses={
            200: GradebookSerializer,
            (200, "text/csv"): OpenApiTypes.STR,
            **COHORT_API_ERRORS,
        },
        summary="An assignment's gradebook: every learner, every item, and why",
        tags=["assignments"],
    )
    def get(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        scores: list[LearnerScore] = gradebook.assignment_gradebook(assignment)
        fmt = getattr(request.accepted_renderer, "format", "json")
        name = f"assignment-{assignment.pk}"
        if fmt == "csv":
            text = gradebook.assignment_csv(assignment, scores)
            return csv_response(text=text, filename=f"{name}.csv")
        if fmt == "canvas":
            rows = [
                gradebook.GradebookRow(s.learner_id, s.username, {assignment.pk: s})
                for s in scores
            ]
            text = gradebook.canvas_csv(
                section=assignment.cohort.name, assignments=[assignment], rows=rows
            )
            return csv_response(text=text, filename=f"{name}-canvas.csv")
        return Response(
            GradebookSerializer({"assignment": assignment, "learners": scores}).data
        )

    def handle_exception(self, exc):
        # Errors are JSON whatever format was asked for.
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = "application/json"
        return super().handle_exception(exc)


class AssignmentExtensionsView(CohortApiView):
    @extend_schema(
        request=ExtensionInSerializer,
        responses={
            201: ExtensionSerializer,
            400: OpenApiResponse(description="Not a member, or not later"),
            **COHORT_API_ERRORS,
        },
        summary="Give one learner a later due date (again: replace it)",
        tags=["assignments"],
    )
    def post(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        data = ExtensionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            extension = services.extension_set(
                assignment=assignment,
                actor=request.user,
                learner=learner_named(data.validated_data["learner"]),
                due_at=data.validated_data["due_at"],
            )
        except services.AssignmentError as exc:
            raise _invalid(exc) from None
        return Response(
            ExtensionSerializer(extension).data, status=status.HTTP_201_CREATED
        )


class AssignmentOverridesView(CohortApiView):
    @extend_schema(
        request=OverrideInSerializer,
        responses={
            201: OverrideSerializer,
            400: OpenApiResponse(description="Outside 0-1, no reason, not a member"),
            **COHORT_API_ERRORS,
        },
        summary="Set one learner's score for one item, with a reason (audited)",
        tags=["assignments"],
    )
    def post(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        data = OverrideInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            override = services.override_set(
                assignment=assignment,
                actor=request.user,
                learner=learner_named(values["learner"]),
                item_id=values["item"],
                score=values["score"],
                reason=values["reason"],
            )
        except services.AssignmentError as exc:
            raise _invalid(exc) from None
        return Response(OverrideSerializer(override).data, status=201)
