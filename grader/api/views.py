"""REST API v1: one thin view per operation; logic lives in services/selectors."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.handlers.asgi import ASGIRequest
from django.db import connection
from django.http import (
    FileResponse,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import renderers, status
from rest_framework.exceptions import (
    NotFound,
    PermissionDenied,
    Throttled,
)
from rest_framework.response import Response

from grader import live, selectors, services, stream_caps
from grader.api import serializers as s
from grader.api.client_compat import engine_headers, engine_info, engine_mismatch
from grader.api.gradescope import submission_gradescope
from grader.local_checks import exercise_local_check
from grader.models import Exercise, Submission
from quiz.content.diagnoses import diagnosis_list
from quiz.core.api.base import ApiView
from quiz.core.api.errors import service_errors_as_400
from quiz.core.api.scopes import LEARN, TEACH, token_scope_require
from quiz.core.exam_mode import ExamLocked, exercise_check


class GraderApiView(ApiView):
    """Exercise and submission views: every response names the server's
    grading engine, and warns a learner client that runs another."""

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        engine_headers(request, response)
        return response


def _exercise_or_404(slug: str) -> Exercise:
    try:
        return selectors.exercise_get(slug=slug)
    except Exercise.DoesNotExist:
        raise NotFound(f"No exercise named {slug!r}.") from None


def _exam_open(user, slug: str, what: str) -> None:
    """403 while exam mode holds this exercise (quiz.core.exam_mode)."""
    try:
        exercise_check(user, slug, what)
    except ExamLocked as exc:
        raise PermissionDenied(str(exc)) from None


def _exercise_for_client(request, slug: str) -> tuple[Exercise, Response | None]:
    """The exercise a client asks about (404, or 403 in exam mode), and the
    409 to answer instead when its grading engine is not the server's: its
    local checks would not be the server's, so it is told what to install."""
    exercise = _exercise_or_404(slug)
    _exam_open(request.user, exercise.slug, "This exercise")
    mismatch = engine_mismatch(request)
    if not mismatch:
        return exercise, None
    conflict = Response(
        {"detail": mismatch, "engine": engine_info(request)},
        status=status.HTTP_409_CONFLICT,
    )
    return exercise, conflict


class ExerciseListView(GraderApiView):
    token_scopes = LEARN

    @extend_schema(
        responses=s.ExerciseListSerializer(many=True), summary="List exercises"
    )
    def get(self, request):
        items = selectors.exercise_list()
        statuses = selectors.exercise_statuses(user=request.user)
        return Response(
            s.ExerciseListSerializer(
                items, many=True, context={"request": request, "statuses": statuses}
            ).data
        )


class ExerciseDetailView(GraderApiView):
    token_scopes = LEARN

    @extend_schema(
        responses={
            200: s.ExerciseDetailSerializer,
            403: OpenApiResponse(
                description="Exam mode: part of a quiz you are sitting"
            ),
            404: OpenApiResponse(description="Unknown exercise"),
            409: OpenApiResponse(
                description="The client's grading engine (X-Course-Engine) is "
                "not the server's; the detail says what to install"
            ),
        },
        summary="Describe an exercise",
    )
    def get(self, request, slug: str):
        exercise, conflict = _exercise_for_client(request, slug)
        if conflict is not None:
            return conflict
        statuses = selectors.exercise_statuses(user=request.user, exercise=exercise)
        return Response(
            s.ExerciseDetailSerializer(
                exercise, context={"request": request, "statuses": statuses}
            ).data
        )


class ExerciseLocalCheckView(GraderApiView):
    token_scopes = LEARN

    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            403: OpenApiResponse(
                description="Exam mode: part of a quiz you are sitting"
            ),
            404: OpenApiResponse(
                description="Unknown exercise, or the server has not built its "
                "local check (`make client`)"
            ),
            409: OpenApiResponse(
                description="The client's grading engine (X-Course-Engine) is "
                "not the server's; the detail says what to install"
            ),
        },
        summary="The data `course check` grades an exercise's visible cases with",
        description="The visible cases and what the server's checks computed "
        "for them (the expected outputs and the known mistakes' outputs), as "
        "a bundle: an 8-byte header length, a JSON header, safetensors "
        "(grading_engine.expected). Its SHA-256 is the exercise's "
        "`local_check.sha256`. No solution, no hidden case.",
    )
    def get(self, request, slug: str):
        exercise, conflict = _exercise_for_client(request, slug)
        if conflict is not None:
            return conflict
        found = exercise_local_check(exercise=exercise)
        if found is None:
            raise NotFound(
                f"This server has not built the local check of {slug!r}: "
                "`course submit` grades it here."
            )
        if "blob" in found:  # an authored exercise's, kept on its row
            return HttpResponse(found["blob"], content_type="application/octet-stream")
        return FileResponse(
            found["path"].open("rb"), content_type="application/octet-stream"
        )


class DiagnosisListView(GraderApiView):
    token_scopes = LEARN

    @extend_schema(
        responses=s.DiagnosisHintSerializer(many=True),
        summary="Every named mistake a check can report, and what teaches it",
        description="A failed check's `diagnosis` is one of these slugs; the "
        "learner client shows its summary and lessons, as the submission page does.",
    )
    def get(self, request):
        return Response(
            s.DiagnosisHintSerializer(
                diagnosis_list(), many=True, context={"request": request}
            ).data
        )


class SubmissionCreateView(GraderApiView):
    token_scopes = LEARN
    # Throttling lives in services.submission_create, shared with the HTML form.

    @extend_schema(
        request=s.SubmissionCreateSerializer,
        responses={
            202: s.SubmissionCreatedSerializer,
            400: OpenApiResponse(description="Invalid code"),
            403: OpenApiResponse(
                description="Exam mode: part of a quiz you are sitting"
            ),
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
            with service_errors_as_400(services.SubmissionRejected, field="code"):
                submission = services.submission_create(
                    user=request.user,
                    exercise=exercise,
                    code=data.validated_data["code"],
                )
        except ExamLocked as exc:
            raise PermissionDenied(str(exc)) from None
        except services.SubmissionThrottled as exc:
            # DRF adds the Retry-After header and "Expected available in N s".
            raise Throttled(
                wait=exc.retry_after, detail=f"Request was throttled: {exc}."
            ) from None
        url = request.build_absolute_uri(f"/api/v1/submissions/{submission.pk}/")
        return Response(
            {"id": submission.pk, "status": submission.status, "url": url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )


def _submission_or_404(request, submission_id) -> Submission:
    """The submission, 404 if not visible; 403 while exam mode holds its
    exercise for its own learner (its checks would show a quiz's answer)."""
    try:
        submission = selectors.submission_get(
            user=request.user, submission_id=submission_id
        )
    except (Submission.DoesNotExist, DjangoValidationError):
        raise NotFound("No such submission.") from None
    own = submission.user_id == request.user.pk
    # A token reads its own submissions with `learn`; a learner's in a cohort
    # (an instructor reading it) takes `teach`.
    token_scope_require(request, LEARN if own else TEACH)
    if own:
        _exam_open(request.user, submission.exercise.slug, "This submission's feedback")
    return submission


def _submission_data(submission: Submission, request) -> dict:
    submission.queue_position = selectors.submission_queue_position(submission)
    return s.SubmissionSerializer(submission, context={"request": request}).data


class SubmissionDetailView(GraderApiView):
    token_scopes = (LEARN, TEACH)  # whose: _submission_or_404

    @extend_schema(
        responses=s.SubmissionSerializer, summary="A submission's status and results"
    )
    def get(self, request, submission_id):
        submission = _submission_or_404(request, submission_id)
        return Response(_submission_data(submission, request))


class SubmissionCancelView(GraderApiView):
    token_scopes = LEARN

    @extend_schema(
        request=None,
        responses={
            200: s.SubmissionSerializer,
            404: OpenApiResponse(description="Not one of your submissions"),
            409: OpenApiResponse(description="Its grade already finished"),
        },
        summary="Cancel your queued or running submission",
        description="The submission becomes `cancelled` and its grading slot is "
        "freed at once; a running grade is stopped. Only the learner who "
        "submitted it can cancel it.",
    )
    def post(self, request, submission_id):
        try:
            submission = services.submission_cancel(
                user=request.user, submission_id=submission_id
            )
        except (Submission.DoesNotExist, DjangoValidationError):
            raise NotFound("No such submission.") from None
        except services.CancelRefused as exc:
            return Response(
                {"detail": f"Not cancelled: {exc}.", "status": exc.status},
                status=status.HTTP_409_CONFLICT,
            )
        return Response(_submission_data(submission, request))


class EventStreamRenderer(renderers.BaseRenderer):
    """Lets `Accept: text/event-stream` through negotiation; the stream itself
    is a StreamingHttpResponse, and errors are JSON (handle_exception)."""

    media_type = "text/event-stream"
    format = "event-stream"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return b""


class SubmissionEventsView(GraderApiView):
    token_scopes = (LEARN, TEACH)  # whose: _submission_or_404
    renderer_classes = [renderers.JSONRenderer, EventStreamRenderer]

    def handle_exception(self, exc):
        # A 401/404 is JSON with a `detail`, whatever the client accepts.
        self.request.accepted_renderer = renderers.JSONRenderer()
        self.request.accepted_media_type = "application/json"
        return super().handle_exception(exc)

    @extend_schema(
        responses={
            (200, "text/event-stream"): OpenApiTypes.STR,
            404: OpenApiResponse(description="No such submission"),
            429: OpenApiResponse(
                description="Too many of your streams open (Retry-After): poll"
            ),
            503: OpenApiResponse(
                description="This server holds all the streams it may "
                "(Retry-After): poll"
            ),
        },
        summary="A submission's status, pushed as server-sent events",
        description="`event: status` with the same JSON as "
        "`GET /api/v1/submissions/{id}/` (plus `terminal`), sent at once, on "
        "every change and every few seconds; the stream ends at the verdict "
        f"or after {live.STREAM_SECONDS:g} s on a WSGI server, "
        f"{settings.STREAM_SECONDS_ASGI:g} s on an ASGI one (EventSource "
        "reconnects). Past a cap (your streams, or the server's) it is refused "
        "with 429 or 503 and Retry-After: poll the submission instead. A "
        "stream let in as the last slots went sends one `event: refused` "
        "(`detail`, `cap`, `retry_after`) and ends: poll then too.",
    )
    def get(self, request, submission_id):
        first = _submission_or_404(request, submission_id)
        user = request.user
        asgi = isinstance(request._request, ASGIRequest)
        lifetime = settings.STREAM_SECONDS_ASGI if asgi else live.STREAM_SECONDS
        try:
            stream_caps.stream_check(user.pk)  # counted once served, not here
        except stream_caps.StreamRefused as exc:
            refused = JsonResponse({"detail": str(exc)}, status=exc.status)
            refused["Retry-After"] = str(exc.retry_after)
            return refused

        def read() -> dict | None:
            try:
                submission = selectors.submission_get(user=user, submission_id=first.pk)
            except Submission.DoesNotExist:
                return None
            return {
                **_submission_data(submission, request),
                "terminal": submission.is_terminal,
            }

        if asgi:  # waits on the event loop
            stream = stream_caps.served_async(
                live.submission_stream_async(
                    submission_id=first.pk, user_id=user.pk, read=read
                ),
                user_id=user.pk,
                lifetime=lifetime,
            )
            connection.close()  # back to the pool: the stream reads on its own
        else:  # WSGI: the request's thread waits
            stream = stream_caps.served(
                live.submission_stream(submission_id=first.pk, read=read),
                user_id=user.pk,
                lifetime=lifetime,
            )
        response = StreamingHttpResponse(stream, content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # a proxy must not hold events back
        return response


class SubmissionGradescopeView(GraderApiView):
    token_scopes = (LEARN, TEACH)  # whose: _submission_or_404

    @extend_schema(
        responses=s.GradescopeResultSerializer,
        summary="A submission's result in Gradescope's results.json shape",
    )
    def get(self, request, submission_id):
        submission = _submission_or_404(request, submission_id)
        return Response(submission_gradescope(submission))
