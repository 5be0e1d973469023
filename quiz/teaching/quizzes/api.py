"""Quiz API: quizzes for instructors, attempts for learners.

Quizzes answer as assignments do (quiz.teaching.access): the cohort's
instructors and superusers; anyone else 404, a learner 403 on a cohort's
list. An attempt answers only to its learner (404 for anyone else). Every
write goes through quiz.teaching.quizzes.services; every attempt leaves
through presenting.attempt_state, which holds back keys until the
feedback policy allows.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import renderers, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from quiz.core.api.base import ApiView
from quiz.core.api.negotiation import FormatFirstNegotiation
from quiz.core.api.scopes import LEARN, TEACH, token_allows, token_scope_require
from quiz.teaching.access import COHORT_API_ERRORS, CohortApiView, IsInstructor
from quiz.teaching.assignments.api import CsvRenderer, learner_named
from quiz.teaching.csv_files import csv_response, csv_text, export_filename
from quiz.teaching.quizzes import (
    access,
    attempt_regrade,
    overrides,
    picker,
    results,
    services,
)
from quiz.teaching.quizzes.item_analysis import report
from quiz.teaching.quizzes.models import Quiz, QuizQuestionChange
from quiz.teaching.quizzes.presenting import attempt_state

# Serializers -----------------------------------------------------------------


class MinutesField(serializers.FloatField):
    """Minutes, fractions allowed; whole minutes read as integers (30, not 30.0)."""

    def to_representation(self, value):
        value = super().to_representation(value)
        return int(value) if value.is_integer() else value


class SlotInSerializer(serializers.Serializer):
    points = serializers.FloatField(default=1.0)
    draw = serializers.IntegerField(default=1, help_text="Questions drawn (>= 1).")
    pool = serializers.DictField(
        help_text='Any of {"questions": [ids], "templates": [slugs], '
        '"exercises": [slugs], "lessons": [slugs], "sections": [slugs]}. An '
        "exercise is a code question, graded by the grader when the feedback "
        "policy lets its checks show."
    )


class QuizInSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
    time_limit = MinutesField(
        allow_null=True,
        required=False,
        default=None,
        help_text="Minutes per attempt, fractions allowed (7.5 is 7 min 30 s, "
        "kept to the second); null: none.",
    )
    attempts_allowed = serializers.IntegerField(default=1)
    combine = serializers.ChoiceField(Quiz.Combine.values, default=Quiz.Combine.BEST)
    feedback = serializers.ChoiceField(
        Quiz.Feedback.values, default=Quiz.Feedback.AFTER_SUBMIT
    )
    shuffle = serializers.BooleanField(default=True)
    slots = SlotInSerializer(many=True)


class QuizPatchSerializer(QuizInSerializer):
    archived = serializers.BooleanField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


class SlotSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.SerializerMethodField()
    points = serializers.FloatField()
    draw = serializers.IntegerField()
    pool = serializers.DictField()

    def get_number(self, obj) -> int:
        return obj.order + 1


class QuizSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    cohort = serializers.IntegerField(source="cohort_id")
    title = serializers.CharField()
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
    time_limit = MinutesField(allow_null=True)
    attempts_allowed = serializers.IntegerField()
    combine = serializers.CharField()
    feedback = serializers.CharField()
    shuffle = serializers.BooleanField()
    archived = serializers.SerializerMethodField()
    slots = SlotSerializer(many=True, source="slots.all")
    url = serializers.SerializerMethodField()

    def get_archived(self, obj) -> bool:
        return obj.archived_at is not None

    def get_url(self, obj) -> str:
        return f"/api/v1/quizzes/{obj.pk}/"


class LearnerQuizSerializer(serializers.Serializer):
    """What a learner sees of a quiz: no pools (they would name the questions)."""

    id = serializers.IntegerField()
    title = serializers.CharField()
    opens_at = serializers.DateTimeField()
    closes_at = serializers.DateTimeField()
    time_limit = MinutesField(allow_null=True)
    attempts_allowed = serializers.IntegerField()
    combine = serializers.CharField()
    feedback = serializers.CharField()


class AccommodationInSerializer(serializers.Serializer):
    learner = serializers.CharField(help_text="A learner's id or username.")
    time_factor = serializers.FloatField(required=False, help_text="1 to 10, e.g. 1.5")
    closes_at = serializers.DateTimeField(required=False)
    extra_attempts = serializers.IntegerField(
        required=False, help_text="Attempts beyond the quiz's own (0 to 20)."
    )


class AccommodationSerializer(serializers.Serializer):
    learner = serializers.CharField(source="learner.username")
    time_factor = serializers.FloatField()
    closes_at = serializers.DateTimeField(allow_null=True)
    extra_attempts = serializers.IntegerField()


class AttemptStartSerializer(serializers.Serializer):
    restart = serializers.BooleanField(
        default=False, help_text="Instructors: end the preview and start a new one."
    )


class AnswersSerializer(serializers.Serializer):
    """A save: answers, flags for review, or both (one of them at least)."""

    answers = serializers.DictField(
        required=False,
        help_text="Question number -> answer: an option's id, a number as text, "
        "or Python source for a code question (the starter sent back unchanged "
        "is no answer). Only the questions given change.",
    )
    flags = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        max_length=1000,
        help_text="The question numbers flagged for review: replaces the "
        "flagged set ([] clears it). Refused after the deadline, like answers.",
    )

    def validate(self, attrs):
        if "answers" not in attrs and "flags" not in attrs:
            raise ValidationError(
                {"answers": ["Give answers, flags, or both."]}, code="required"
            )
        return attrs


# Helpers ---------------------------------------------------------------------


def _slots(rows) -> list[services.SlotSpec]:
    return [
        services.SlotSpec(
            pool=r.get("pool", {}), points=r.get("points", 1.0), draw=r.get("draw", 1)
        )
        for r in rows
    ]


def _invalid(exc: services.QuizError) -> ValidationError:
    return ValidationError({exc.field: [str(exc)]})


def _conflict(exc: services.QuizError) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


def _own_attempt(request, attempt_id: int):
    """The caller's attempt; a token takes `learn` for it, `teach` for an
    instructor's preview (its questions before the quiz opens)."""
    attempt = access.attempt_own(request.user, attempt_id)
    token_scope_require(request, TEACH if attempt.preview else LEARN)
    return attempt


# Views -----------------------------------------------------------------------


class CohortQuizzesView(CohortApiView):
    @extend_schema(
        responses={200: QuizSerializer(many=True), **COHORT_API_ERRORS},
        summary="A cohort's quizzes",
        tags=["quizzes"],
    )
    def get(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        rows = Quiz.objects.filter(cohort=cohort).prefetch_related("slots")
        return Response(QuizSerializer(rows, many=True).data)

    @extend_schema(
        request=QuizInSerializer,
        responses={
            201: QuizSerializer,
            400: OpenApiResponse(description="Invalid quiz"),
            **COHORT_API_ERRORS,
        },
        summary="Create a quiz for a cohort",
        tags=["quizzes"],
    )
    def post(self, request, cohort_id: int):
        cohort = self.cohort(request, cohort_id)
        data = QuizInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        try:
            quiz = services.quiz_create(
                cohort=cohort,
                actor=request.user,
                slots=_slots(values.pop("slots")),
                **values,
            )
        except services.QuizError as exc:
            raise _invalid(exc) from None
        return Response(QuizSerializer(quiz).data, status=status.HTTP_201_CREATED)


class QuizView(ApiView):
    permission_classes = [IsAuthenticated]
    # GET: a learn token sees what a learner sees, even its instructor's.
    token_scopes = {"GET": (LEARN, TEACH), "PATCH": TEACH, "DELETE": TEACH}

    @extend_schema(
        responses={200: QuizSerializer, 404: OpenApiResponse(description="No quiz")},
        summary="A quiz: all of it for its instructors, its settings for learners",
        tags=["quizzes"],
    )
    def get(self, request, quiz_id: int):
        quiz, teaches = access.quiz_seen(request.user, quiz_id)
        if teaches and token_allows(request, TEACH):
            return Response(QuizSerializer(quiz).data)
        return Response(LearnerQuizSerializer(quiz).data)

    @extend_schema(
        request=QuizPatchSerializer,
        responses={200: QuizSerializer, 400: OpenApiResponse(description="Invalid")},
        summary="Change a quiz (slots only while learners have no attempts)",
        tags=["quizzes"],
    )
    def patch(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = QuizPatchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        slots = values.pop("slots", None)
        try:
            quiz = services.quiz_update(
                quiz=quiz,
                actor=request.user,
                slots=None if slots is None else _slots(slots),
                **values,
            )
        except services.QuizError as exc:
            raise _invalid(exc) from None
        return Response(QuizSerializer(quiz).data)

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
            services.quiz_delete(quiz=quiz, actor=request.user)
        except services.QuizError as exc:
            return _conflict(exc)
        return Response(status=status.HTTP_204_NO_CONTENT)


class QuizAttemptsView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = (LEARN, TEACH)  # an attempt: learn; a preview: teach

    @extend_schema(
        request=AttemptStartSerializer,
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
        data = AttemptStartSerializer(data=request.data or {})
        data.is_valid(raise_exception=True)
        try:
            attempt, created = services.attempt_start(
                quiz=quiz,
                learner=request.user,
                preview=teaches,
                restart=teaches and data.validated_data["restart"],
            )
        except services.AttemptRefused as exc:
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
        attempt = services.attempt_refresh(_own_attempt(request, attempt_id))
        return Response(attempt_state(attempt))

    @extend_schema(
        request=AnswersSerializer,
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
        data = AnswersSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            result = services.attempt_save(
                attempt=attempt,
                answers=data.validated_data.get("answers", {}),
                flags=data.validated_data.get("flags"),
            )
        except services.AttemptClosed as exc:
            return _conflict(exc)
        except services.QuizError as exc:
            raise _invalid(exc) from None
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
        attempt = services.attempt_submit(attempt=attempt, by="learner")
        return Response(attempt_state(attempt))


class QuizAccommodationsView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=AccommodationInSerializer,
        responses={200: AccommodationSerializer, 400: OpenApiResponse()},
        summary="Give a learner extra time (a factor) or a later close",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = AccommodationInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if not {"time_factor", "closes_at", "extra_attempts"} & set(values):
            raise ValidationError(
                {"time_factor": ["Give time_factor, closes_at or extra_attempts."]}
            )
        try:
            row = services.accommodation_set(
                quiz=quiz,
                learner=learner_named(values["learner"]),
                actor=request.user,
                time_factor=values.get("time_factor"),
                closes_at=values.get("closes_at"),
                extra_attempts=values.get("extra_attempts"),
            )
        except services.QuizError as exc:
            raise _invalid(exc) from None
        return Response(AccommodationSerializer(row).data)


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
        services.close_expired(quiz=quiz)
        rows = results.quiz_results(quiz)
        if self.wants_csv(request):
            return results.results_csv(quiz, rows)
        return Response({"quiz": QuizSerializer(quiz).data, "learners": rows})


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
        services.close_expired(quiz=quiz)
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


class ReopenInSerializer(serializers.Serializer):
    learner = serializers.CharField(help_text="A learner's id or username.")
    closes_at = serializers.DateTimeField(help_text="Their new close (future).")
    extra_attempts = serializers.IntegerField(
        default=1, help_text="Attempts added to what they had (0 to 20)."
    )


class QuizCloseView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=None,
        responses={
            200: QuizSerializer,
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
        try:
            quiz = services.quiz_close_now(quiz=quiz, actor=request.user)
        except services.QuizError as exc:
            raise _invalid(exc) from None
        return Response(QuizSerializer(quiz).data)


class QuizReopenView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=ReopenInSerializer,
        responses={200: AccommodationSerializer, 400: OpenApiResponse()},
        summary="Reopen the quiz for one learner: a later close, more attempts",
        description="With feedback after close, everyone's feedback is held "
        "again until this learner's new close. Audited.",
        tags=["quizzes"],
    )
    def post(self, request, quiz_id: int):
        quiz = access.quiz_taught(request.user, quiz_id)
        data = ReopenInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            row = services.quiz_reopen(
                quiz=quiz,
                learner=learner_named(values["learner"]),
                actor=request.user,
                closes_at=values["closes_at"],
                extra_attempts=values["extra_attempts"],
            )
        except services.QuizError as exc:
            raise _invalid(exc) from None
        return Response(AccommodationSerializer(row).data)


class AttemptOverrideInSerializer(serializers.Serializer):
    question = serializers.IntegerField(help_text="The question's number.")
    points = serializers.FloatField(
        allow_null=True, help_text="Its points (0 to its worth); null: the keys'."
    )
    comment = serializers.CharField(
        allow_blank=True, required=False, default="", help_text="Why (required)."
    )


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
        attempt = services.attempt_refresh(attempt)
        return Response(_review(attempt))


class AttemptOverridesView(ApiView):
    permission_classes = [IsAuthenticated]
    token_scopes = TEACH

    @extend_schema(
        request=AttemptOverrideInSerializer,
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiResponse()},
        summary="Set one question's score in one attempt, with a comment",
        description="Kept through regrades; the attempt's score, the gradebook "
        "and the LMS follow. `points: null` gives the question back to the "
        "keys. Audited.",
        tags=["quizzes"],
    )
    def post(self, request, attempt_id: int):
        attempt = access.attempt_taught(request.user, attempt_id)
        data = AttemptOverrideInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            attempt = overrides.item_override_set(
                attempt=attempt,
                item=values["question"],
                points=values["points"],
                comment=values["comment"],
                actor=request.user,
            )
        except services.QuizError as exc:
            raise _invalid(exc) from None
        return Response(_review(attempt))


class QuestionRegradeInSerializer(serializers.Serializer):
    question = serializers.CharField(
        help_text='The question: its ref, as GET .../questions/ lists ("q:12", '
        '"t:kv-cache-bytes", "b:...", "x:...").'
    )
    action = serializers.ChoiceField(
        choices=[*QuizQuestionChange.Action.values, "undo"],
        help_text="key, tolerance, full_credit, drop; or undo this question's change.",
    )
    answer = serializers.JSONField(
        required=False,
        help_text="key: the right option (its index among the question's options "
        "as the bank stores them) or the number.",
    )
    absolute = serializers.FloatField(required=False, allow_null=True)
    relative = serializers.FloatField(
        required=False, allow_null=True, help_text="0.01 is 1%."
    )
    comment = serializers.CharField(required=False, allow_blank=True, default="")
    dry_run = serializers.BooleanField(
        default=False, help_text="Show whose scores would change; save nothing."
    )


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
        request=QuestionRegradeInSerializer,
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
        data = QuestionRegradeInSerializer(data=request.data)
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
        try:
            if values["dry_run"] and not undo:
                rows = attempt_regrade.question_change_preview(
                    quiz=quiz, request=change
                )
                return Response({"dry_run": True, "changes": rows})
            regrade = attempt_regrade.question_change_set(
                quiz=quiz, request=change, actor=request.user, undo=undo
            )
        except attempt_regrade.ChangeInvalid as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
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
        try:
            found = picker.bank_search_params(request.query_params)
        except picker.SearchInvalid as exc:
            raise ValidationError({exc.field: [str(exc)]}) from None
        return Response({"results": found, "limit": picker.LIMIT})
