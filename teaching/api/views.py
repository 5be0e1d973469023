"""The teaching API: instructors' cohorts (their submissions, analytics and
progress matrix), exercise regrades, assignments (CRUD, the gradebook as JSON,
CSV or Canvas's import, extensions, overrides), quizzes for instructors and
attempts for learners.

The same selectors and services as the pages, so the numbers are the same and
every write goes through teaching.assignments.services or
teaching.quizzes.services. Cohorts, assignments and quizzes answer only
for their cohort's instructors and superusers (teaching.access): anyone
else gets 404, a learner 403 on a cohort's list. An attempt answers only to
its learner (404 for anyone else), and leaves through
presenting.attempt_state, which holds back keys until the feedback policy
allows.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from grader.models import Regrade
from quiz.core.api.base import ApiView
from quiz.core.api.errors import service_errors_as_400
from quiz.core.api.negotiation import FormatFirstNegotiation
from quiz.core.api.scopes import LEARN, TEACH, token_allows, token_scope_require
from quiz.core.params import BadNumber, id_in_range, whole_number
from teaching import selectors as sel
from teaching.access import COHORT_API_ERRORS, CohortApiView, IsInstructor
from teaching.api import serializers as s
from teaching.assignments import gradebook
from teaching.assignments import services as assignment_services
from teaching.assignments.scoring import LearnerScore
from teaching.cohort_analytics import cohort_analytics
from teaching.csv_files import csv_response, csv_text, export_filename
from teaching.exercise_regrade import (
    RegradeRefused,
    regrade_request,
    regrade_visible,
)
from teaching.matrix.build import UnknownSection, progress_matrix_for
from teaching.models import Assignment
from teaching.quizzes import (
    access,
    attempt_regrade,
    overrides,
    picker,
    results,
)
from teaching.quizzes import services as quiz_services
from teaching.quizzes.item_analysis import report
from teaching.quizzes.models import Quiz
from teaching.quizzes.presenting import attempt_state

SUBMISSIONS_MAX_LIMIT = 1000


# Cohorts ---------------------------------------------------------------------


class CohortListView(CohortApiView):
    @extend_schema(
        responses={200: s.CohortSerializer(many=True), 403: COHORT_API_ERRORS[403]},
        summary="List the cohorts you own (a superuser sees all)",
        tags=["cohorts"],
    )
    def get(self, request):
        cohorts = sel.cohort_list(user=request.user)
        return Response(
            s.CohortSerializer(cohorts, many=True, context={"request": request}).data
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
            200: s.CohortSubmissionSerializer(many=True),
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
        return Response(s.CohortSubmissionSerializer(qs[:limit], many=True).data)


def _int_param(params, name: str, default):
    """A whole number in ASCII digits within bigint, else a 400 naming `name`."""
    with service_errors_as_400(BadNumber, field=name):
        value = whole_number(params.get(name))
    return default if value is None else value


class CohortAnalyticsView(CohortApiView):
    @extend_schema(
        responses={200: s.AnalyticsSerializer, **COHORT_API_ERRORS},
        summary="Per-exercise and per-question analytics of a cohort",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        return Response(s.AnalyticsSerializer(cohort_analytics(cohort=cohort)).data)


# The progress matrix ---------------------------------------------------------


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
            200: s.MatrixSerializer,
            400: OpenApiResponse(description="Unknown section"),
            **COHORT_API_ERRORS,
        },
        summary="A cohort's progress matrix (learners x lessons)",
        tags=["cohorts"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        with service_errors_as_400(UnknownSection, field="section"):
            matrix = progress_matrix_for(cohort=cohort, query=request.query_params)
        return Response(s.MatrixSerializer(matrix).data)


# Exercise regrades -----------------------------------------------------------


class RegradeStartView(CohortApiView):
    @extend_schema(
        request=s.RegradeInSerializer,
        responses={
            202: s.RegradeStartedSerializer,
            400: OpenApiResponse(description="Bad input"),
            **COHORT_API_ERRORS,
        },
        summary="Regrade an exercise's submissions in the background",
        description="Grades every graded submission of the exercise (of the "
        "cohort's learners, or everyone's for a superuser) again against the "
        "exercise as it is now. Live grades go first. Old verdicts are kept.",
        tags=["regrades"],
    )
    def post(self, request, slug: str):
        data = s.RegradeInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        cohort = data.validated_data.get("cohort")
        if cohort is not None and not id_in_range(cohort):
            raise NotFound("No such cohort.")
        try:
            regrade = regrade_request(user=request.user, slug=slug, cohort_id=cohort)
        except RegradeRefused as exc:
            if exc.missing:
                raise NotFound(str(exc)) from None
            raise PermissionDenied(str(exc)) from None
        url = f"/api/v1/regrades/{regrade.pk}/"
        return Response(
            {"id": regrade.pk, "url": url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )


class RegradeDetailView(CohortApiView):
    @extend_schema(
        responses={200: s.RegradeSerializer, **COHORT_API_ERRORS},
        summary="A regrade's progress, counts and changed verdicts",
        tags=["regrades"],
    )
    def get(self, request, regrade_id: int):
        try:
            regrade = regrade_visible(user=request.user, regrade_id=regrade_id)
        except Regrade.DoesNotExist:
            raise NotFound("No such regrade.") from None
        return Response(s.RegradeSerializer(regrade).data)


# Assignments -----------------------------------------------------------------


def _assignment_or_404(request, assignment_id: int) -> Assignment:
    try:
        return sel.assignment_get(user=request.user, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise NotFound("No such assignment.") from None


def _specs(items: list[dict]) -> list[assignment_services.ItemSpec]:
    return [
        assignment_services.ItemSpec(i["kind"], i["slug"], i.get("weight", 1.0))
        for i in items
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


class CsvRenderer(renderers.BaseRenderer):
    """Lets `?format=csv` (and `canvas`) through negotiation; views return files."""

    media_type = "text/csv"
    format = "csv"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, bytes | str) else b""


class CanvasCsvRenderer(CsvRenderer):
    format = "canvas"


class CohortAssignmentsView(CohortApiView):
    @extend_schema(
        responses={200: s.AssignmentSerializer(many=True), **COHORT_API_ERRORS},
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
        return Response(s.AssignmentSerializer(rows, many=True).data)

    @extend_schema(
        request=s.AssignmentInSerializer,
        responses={
            201: s.AssignmentSerializer,
            400: OpenApiResponse(description="Invalid assignment"),
            **COHORT_API_ERRORS,
        },
        summary="Create an assignment for a cohort",
        tags=["assignments"],
    )
    def post(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        data = s.AssignmentInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        with service_errors_as_400(assignment_services.AssignmentError):
            assignment = assignment_services.assignment_create(
                cohort=cohort,
                actor=request.user,
                items=_specs(values.pop("items")),
                **values,
            )
        return Response(
            s.AssignmentSerializer(assignment).data, status=status.HTTP_201_CREATED
        )


class AssignmentView(CohortApiView):
    @extend_schema(
        responses={200: s.AssignmentSerializer, **COHORT_API_ERRORS},
        summary="An assignment",
        tags=["assignments"],
    )
    def get(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        return Response(s.AssignmentSerializer(assignment).data)

    @extend_schema(
        request=s.AssignmentPatchSerializer,
        responses={
            200: s.AssignmentSerializer,
            400: OpenApiResponse(description="Invalid change"),
            **COHORT_API_ERRORS,
        },
        summary="Change an assignment (items replace the list; scores follow)",
        tags=["assignments"],
    )
    def patch(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        data = s.AssignmentPatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        items = values.pop("items", None)
        with service_errors_as_400(assignment_services.AssignmentError):
            assignment = assignment_services.assignment_update(
                assignment=assignment,
                actor=request.user,
                items=None if items is None else _specs(items),
                **values,
            )
        return Response(s.AssignmentSerializer(assignment).data)

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
            assignment_services.assignment_delete(
                assignment=assignment, actor=request.user
            )
        except assignment_services.AssignmentError as exc:
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
            200: s.GradebookSerializer,
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
            s.GradebookSerializer({"assignment": assignment, "learners": scores}).data
        )

    def handle_exception(self, exc):
        # Errors are JSON whatever format was asked for.
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = "application/json"
        return super().handle_exception(exc)


class AssignmentExtensionsView(CohortApiView):
    @extend_schema(
        request=s.ExtensionInSerializer,
        responses={
            201: s.ExtensionSerializer,
            400: OpenApiResponse(description="Not a member, or not later"),
            **COHORT_API_ERRORS,
        },
        summary="Give one learner a later due date (again: replace it)",
        tags=["assignments"],
    )
    def post(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        data = s.ExtensionInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400(assignment_services.AssignmentError):
            extension = assignment_services.extension_set(
                assignment=assignment,
                actor=request.user,
                learner=learner_named(data.validated_data["learner"]),
                due_at=data.validated_data["due_at"],
            )
        return Response(
            s.ExtensionSerializer(extension).data, status=status.HTTP_201_CREATED
        )


class AssignmentOverridesView(CohortApiView):
    @extend_schema(
        request=s.OverrideInSerializer,
        responses={
            201: s.OverrideSerializer,
            400: OpenApiResponse(description="Outside 0-1, no reason, not a member"),
            **COHORT_API_ERRORS,
        },
        summary="Set one learner's score for one item, with a reason (audited)",
        tags=["assignments"],
    )
    def post(self, request, assignment_id: int):
        assignment = _assignment_or_404(request, assignment_id)
        data = s.OverrideInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with service_errors_as_400(assignment_services.AssignmentError):
            override = assignment_services.override_set(
                assignment=assignment,
                actor=request.user,
                learner=learner_named(values["learner"]),
                item_id=values["item"],
                score=values["score"],
                reason=values["reason"],
            )
        return Response(s.OverrideSerializer(override).data, status=201)


# Quizzes and attempts --------------------------------------------------------


def _slots(rows) -> list[quiz_services.SlotSpec]:
    return [
        quiz_services.SlotSpec(
            pool=r.get("pool", {}), points=r.get("points", 1.0), draw=r.get("draw", 1)
        )
        for r in rows
    ]


def _conflict(exc: quiz_services.QuizError) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


def _own_attempt(request, attempt_id: int):
    """The caller's attempt; a token takes `learn` for it, `teach` for an
    instructor's preview (its questions before the quiz opens)."""
    attempt = access.attempt_own(request.user, attempt_id)
    token_scope_require(request, TEACH if attempt.preview else LEARN)
    return attempt


class CohortQuizzesView(CohortApiView):
    @extend_schema(
        responses={200: s.QuizSerializer(many=True), **COHORT_API_ERRORS},
        summary="A cohort's quizzes",
        tags=["quizzes"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        rows = Quiz.objects.filter(cohort=cohort).prefetch_related("slots")
        return Response(s.QuizSerializer(rows, many=True).data)

    @extend_schema(
        request=s.QuizInSerializer,
        responses={
            201: s.QuizSerializer,
            400: OpenApiResponse(description="Invalid quiz"),
            **COHORT_API_ERRORS,
        },
        summary="Create a quiz for a cohort",
        tags=["quizzes"],
    )
    def post(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        data = s.QuizInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        with service_errors_as_400(quiz_services.QuizError):
            quiz = quiz_services.quiz_create(
                cohort=cohort,
                actor=request.user,
                slots=_slots(values.pop("slots")),
                **values,
            )
        return Response(s.QuizSerializer(quiz).data, status=status.HTTP_201_CREATED)


class QuizView(ApiView):
    permission_classes = [IsAuthenticated]
    # GET: a learn token sees what a learner sees, even its instructor's.
    token_scopes = {"GET": (LEARN, TEACH), "PATCH": TEACH, "DELETE": TEACH}

    @extend_schema(
        responses={200: s.QuizSerializer, 404: OpenApiResponse(description="No quiz")},
        summary="A quiz: all of it for its instructors, its settings for learners",
        tags=["quizzes"],
    )
    def get(self, request, quiz_id: int):
        quiz, teaches = access.quiz_seen(request.user, quiz_id)
        if teaches and token_allows(request, TEACH):
            return Response(s.QuizSerializer(quiz).data)
        return Response(s.LearnerQuizSerializer(quiz).data)

    @extend_schema(
        request=s.QuizPatchSerializer,
        responses={200: s.QuizSerializer, 400: OpenApiResponse(description="Invalid")},
        summary="Change a quiz (slots only while learners have no attempts)",
        tags=["quizzes"],
    )
    def patch(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = s.QuizPatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        slots = values.pop("slots", None)
        with service_errors_as_400(quiz_services.QuizError):
            quiz = quiz_services.quiz_update(
                quiz=quiz,
                actor=request.user,
                slots=None if slots is None else _slots(slots),
                **values,
            )
        return Response(s.QuizSerializer(quiz).data)

    @extend_schema(
        responses={
            204: None,
            409: OpenApiResponse(description="Learners have attempts: archive it"),
        },
        summary="Delete a quiz nobody has attempted",
        tags=["quizzes"],
    )
    def delete(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        try:
            quiz_services.quiz_delete(quiz=quiz, actor=request.user)
        except quiz_services.QuizError as exc:
            return _conflict(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)


class QuizAttemptsView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = (LEARN, TEACH)  # an attempt: learn; a preview: teach

    @extend_schema(
        request=s.AttemptStartSerializer,
        responses={
            200: OpenApiResponse(description="The attempt in progress, resumed"),
            201: OpenApiResponse(description="A new attempt"),
            404: OpenApiResponse(description="No such quiz for you"),
            409: OpenApiResponse(description="Not open, closed, or no attempts left"),
        },
        summary="Start an attempt, or resume the one in progress",
        description="A learner of the cohort gets a real attempt; an instructor "
        "of the cohort a preview, which `restart` ends and draws again.",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz, teaches = access.quiz_seen(request.user, quiz_id)
        token_scope_require(request, TEACH if teaches else LEARN)
        data = s.AttemptStartSerializer(data=request.data or {})
        data.is_valid(raise_exception=True)
        try:
            attempt, created = quiz_services.attempt_start(
                quiz=quiz,
                learner=request.user,
                preview=teaches,
                restart=teaches and data.validated_data["restart"],
            )
        except quiz_services.AttemptRefused as exc:
            return _conflict(exc)
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(attempt_state(attempt), status=code)


class AttemptView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = (LEARN, TEACH)  # _own_attempt: a preview takes teach

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiResponse(description="No")},
        summary="An attempt: its questions, your answers, the time left",
        tags=["quizzes"],
    )
    def get(self, request, attempt_id: int):
        attempt = quiz_services.attempt_refresh(_own_attempt(request, attempt_id))
        return Response(attempt_state(attempt))

    @extend_schema(
        request=s.AnswersSerializer,
        responses={
            200: OpenApiTypes.OBJECT,
            400: OpenApiResponse(
                description="An answer is malformed (`answers` names it; the rest "
                "are saved), or `flags` is not a list of this attempt's question "
                "numbers (nothing saved)"
            ),
            409: OpenApiResponse(description="After the deadline, or submitted"),
        },
        summary="Save answers and flags for review (the later of two saves wins)",
        description='`{"answers": {"2": 1}}`, `{"flags": [3, 5]}` or both. '
        "`flags` replaces the questions flagged for review; the attempt lists "
        "them in `flags` and each question's `flagged`.",
        tags=["quizzes"],
    )
    def patch(self, request, attempt_id: int):
        attempt = _own_attempt(request, attempt_id)
        data = s.AnswersSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        with service_errors_as_400(quiz_services.QuizError):
            try:
                result = quiz_services.attempt_save(
                    attempt=attempt,
                    answers=data.validated_data.get("answers", {}),
                    flags=data.validated_data.get("flags"),
                )
            except quiz_services.AttemptClosed as exc:
                return _conflict(exc)
        body = attempt_state(result.attempt)
        if result.errors:
            return Response(
                {
                    "detail": "Some answers were not saved: "
                    + " ".join(result.errors.values()),
                    "answers": result.errors,
                    "saved": result.saved,
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        return Response(body)


class AttemptSubmitView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = (LEARN, TEACH)  # _own_attempt: a preview takes teach

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT},
        summary="Submit an attempt (again: no change)",
        tags=["quizzes"],
    )
    def post(self, request, attempt_id: int):
        attempt = _own_attempt(request, attempt_id)
        attempt = quiz_services.attempt_submit(attempt=attempt, by="learner")
        return Response(attempt_state(attempt))


class QuizAccommodationsView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=s.AccommodationInSerializer,
        responses={200: s.AccommodationSerializer, 400: OpenApiResponse()},
        summary="Give a learner extra time (a factor) or a later close",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = s.AccommodationInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if not {"time_factor", "closes_at", "extra_attempts"} & set(values):
            raise ValidationError(
                {"time_factor": ["Give time_factor, closes_at or extra_attempts."]}
            )
        with service_errors_as_400(quiz_services.QuizError):
            row = quiz_services.accommodation_set(
                quiz=quiz,
                learner=learner_named(values["learner"]),
                actor=request.user,
                time_factor=values.get("time_factor"),
                closes_at=values.get("closes_at"),
                extra_attempts=values.get("extra_attempts"),
            )
        return Response(s.AccommodationSerializer(row).data)


class _JsonOrCsvView(ApiView):
    """A view with a CSV download at `?format=csv`; errors are JSON whatever
    format was asked for."""

    permission_classes = [IsAuthenticated]
    renderer_classes = [renderers.JSONRenderer, CsvRenderer]
    content_negotiation_class = FormatFirstNegotiation

    def wants_csv(self, request) -> bool:
        return getattr(request.accepted_renderer, "format", "json") == "csv"

    def handle_exception(self, exc):
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = "application/json"
        return super().handle_exception(exc)


class QuizResultsView(_JsonOrCsvView):
    token_scopes = TEACH

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"])],
        responses={
            200: OpenApiTypes.OBJECT,
            (200, "text/csv"): OpenApiTypes.STR,
            404: OpenApiResponse(description="Not one of your quizzes"),
        },
        summary="Every learner's score on a quiz, with each attempt",
        tags=["quizzes"],
    )
    def get(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        quiz_services.close_expired(quiz=quiz)
        rows = results.quiz_results(quiz)
        if self.wants_csv(request):
            return results.results_csv(quiz, rows)
        return Response({"quiz": s.QuizSerializer(quiz).data, "learners": rows})


class QuizStatisticsView(_JsonOrCsvView):
    token_scopes = TEACH

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["json", "csv"])],
        responses={
            200: OpenApiTypes.OBJECT,
            (200, "text/csv"): OpenApiTypes.STR,
            404: OpenApiResponse(description="Not one of your quizzes"),
        },
        summary="Item analysis: facility, discrimination, alpha, misconceptions",
        description="Over submitted attempts (previews left out). For the quiz: "
        "mean and sd as fractions of the points (0-1, like an attempt's score), "
        "mean_points, sd_points and possible in points, alpha, not_recorded "
        "(results left out: a dropped or never-scored item, or not a finite "
        "number) and min_responses_to_flag. Per slot and question: item (its "
        "number, as on the page and in the CSV), title, prompt (empty when "
        "varies: a template's numbers differ per learner), n, not_recorded, "
        "facility, sd, discrimination (item vs the rest of the test), "
        "discriminative efficiency; per option its share overall and in the top "
        "and bottom 27%; common wrong answers; flags with reasons, only from "
        "min_responses_to_flag responses (else flags_withheld and a note: 'no "
        "responses' or 'too few responses (n < 5) to flag'); and the "
        "misconceptions behind wrong answers, linked to diagnoses and lessons.",
        tags=["quizzes"],
    )
    def get(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        quiz_services.close_expired(quiz=quiz)
        found = report.quiz_analysis(quiz)
        if self.wants_csv(request):
            return csv_response(
                text=csv_text(*_split(report.csv_rows(found))),
                filename=export_filename(quiz.cohort, f"quiz-{quiz.pk}-statistics"),
            )
        return Response(
            {
                "quiz": {"id": quiz.pk, "title": quiz.title},
                **report.analysis_dict(found),
            }
        )


def _split(rows: list[list]) -> tuple[list, list[list]]:
    return rows[0], rows[1:]


class QuizRegradeView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=None,
        responses={200: OpenApiTypes.OBJECT},
        summary="Rescore every attempt by the current keys; list what changed",
        description="Old scores are kept in the report: each changed attempt "
        "with its points and score before and after, and which questions moved.",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        regrade = attempt_regrade.quiz_regrade(quiz=quiz, actor=request.user)
        return Response(
            {
                "id": regrade.pk,
                "quiz": quiz.pk,
                "created_at": regrade.created_at,
                "total": regrade.total,
                "changed": regrade.changed,
                "changes": attempt_regrade.regrade_report(regrade),
            }
        )


# The instructor's tools around an assessment ---------------------------------


class QuizCloseView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=None,
        responses={
            200: s.QuizSerializer,
            400: OpenApiResponse(description="Not open yet (the field named)"),
            403: OpenApiResponse(description="A learner of the cohort"),
            404: OpenApiResponse(description="Not one of your quizzes"),
        },
        summary="Close the quiz for everyone now",
        description="Later closes granted to learners end now too; running "
        "attempts are submitted with their saved answers; feedback held until "
        "the close opens as the policy says. Audited.",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        with service_errors_as_400(quiz_services.QuizError):
            quiz = quiz_services.quiz_close_now(quiz=quiz, actor=request.user)
        return Response(s.QuizSerializer(quiz).data)


class QuizReopenView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=s.ReopenInSerializer,
        responses={200: s.AccommodationSerializer, 400: OpenApiResponse()},
        summary="Reopen the quiz for one learner: a later close, more attempts",
        description="With feedback after close, everyone's feedback is held "
        "again until this learner's new close. Audited.",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = s.ReopenInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with service_errors_as_400(quiz_services.QuizError):
            row = quiz_services.quiz_reopen(
                quiz=quiz,
                learner=learner_named(values["learner"]),
                actor=request.user,
                closes_at=values["closes_at"],
                extra_attempts=values["extra_attempts"],
            )
        return Response(s.AccommodationSerializer(row).data)


def _review(attempt) -> dict:
    return {
        "learner": attempt.learner.username,
        **attempt_state(attempt, review=True),
    }


class AttemptReviewView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT, 403: OpenApiResponse(), 404: None},
        summary="One learner's attempt as their instructor reviews it",
        description="Every question as the learner saw it (their variant), "
        "their answer, the key, each question's score, code with its checks, "
        "and any score an instructor set, whatever the feedback policy.",
        tags=["quizzes"],
    )
    def get(self, request, attempt_id: int):
        attempt = access.attempt_taught(request.user, attempt_id)
        attempt = quiz_services.attempt_refresh(attempt)
        return Response(_review(attempt))


class AttemptOverridesView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=s.AttemptOverrideInSerializer,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse()},
        summary="Set one question's score in one attempt, with a comment",
        description="Kept through regrades; the attempt's score, the gradebook "
        "and the LMS follow. `points: null` gives the question back to the "
        "keys. Audited.",
        tags=["quizzes"],
    )
    def post(self, request, attempt_id: int):
        attempt = access.attempt_taught(request.user, attempt_id)
        data = s.AttemptOverrideInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        with service_errors_as_400(quiz_services.QuizError):
            attempt = overrides.item_override_set(
                attempt=attempt,
                item=values["question"],
                points=values["points"],
                comment=values["comment"],
                actor=request.user,
            )
        return Response(_review(attempt))


class QuizQuestionsView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="A quiz's questions (every one its slots draw from), with keys "
        "and any change made for this quiz",
        tags=["quizzes"],
    )
    def get(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        return Response({"questions": attempt_regrade.quiz_questions(quiz)})


class QuizQuestionRegradeView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=s.QuestionRegradeInSerializer,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse()},
        summary="Regrade one question for this quiz only (with a dry run)",
        description="A new key or tolerance, full credit for everyone, or drop "
        "it (its points leave every total), for this quiz only: the question "
        "stays as it is elsewhere. `dry_run` lists whose scores would change and "
        "by how much; otherwise every submitted attempt is rescored and the "
        "report keeps the old scores.",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = s.QuestionRegradeInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        undo = values["action"] == "undo"
        change = attempt_regrade.ChangeRequest(
            ref=values["question"],
            action="" if undo else values["action"],
            answer=values.get("answer"),
            absolute=values.get("absolute"),
            relative=values.get("relative"),
            comment=values["comment"],
        )
        with service_errors_as_400(attempt_regrade.ChangeInvalid):
            if values["dry_run"] and not undo:
                rows = attempt_regrade.question_change_preview(
                    quiz=quiz, request=change
                )
                return Response({"dry_run": True, "changes": rows})
            regrade = attempt_regrade.question_change_set(
                quiz=quiz, request=change, actor=request.user, undo=undo
            )
        return Response(
            {
                "dry_run": False,
                "id": regrade.pk,
                "what": regrade.what,
                "total": regrade.total,
                "changed": regrade.changed,
                "changes": attempt_regrade.regrade_report(regrade),
            }
        )


class QuizBankView(ApiView):
    permission_classes = [IsAuthenticated, IsInstructor]
    token_scopes = TEACH

    @extend_schema(
        parameters=[
            OpenApiParameter("q", str, description="Words in the prompt or title"),
            OpenApiParameter("lesson", str, description="A lesson's slug"),
            OpenApiParameter("section", str, description="A section's slug"),
            OpenApiParameter("kind", str, enum=list(picker.KINDS)),
            OpenApiParameter("source", str, enum=list(picker.SOURCES)),
        ],
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse()},
        summary="Search the question bank for a quiz (instructors)",
        description="Self-checks, templates, quiz-only questions and exercises, "
        "each with a sample (a template: one draw of its numbers), its "
        "`slot_word` for the slot text, and whether it is practice in a "
        "held-back quiz.",
        tags=["quizzes"],
    )
    def get(self, request):
        with service_errors_as_400(picker.SearchInvalid):
            found = picker.bank_search_params(request.query_params)
        return Response({"results": found, "limit": picker.LIMIT})
