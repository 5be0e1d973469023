"""Small input/output serializers, one per operation."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from grading_engine.grading import TOLERANCE_OPTIONS
from rest_framework import serializers

from grader.api.client_compat import engine_info
from grader.budgets import exercise_budget, exercise_lane
from grader.local_checks import exercise_local_check
from grader.models import Exercise, Submission
from grader.selectors import SET_ASIDE_WAIT, submission_waits_behind_own


class ExerciseListSerializer(serializers.ModelSerializer):
    lesson = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    url = serializers.SerializerMethodField()
    html_url = serializers.SerializerMethodField(help_text="The exercise's page.")
    status = serializers.SerializerMethodField(
        help_text='Yours: "passed" (at least once), "attempted" or "not started".'
    )

    class Meta:
        model = Exercise
        fields = [
            "slug",
            "title",
            "lesson",
            "entry_point",
            "signature",
            "url",
            "html_url",
            "status",
        ]

    def get_url(self, obj: Exercise) -> str:
        return self.context["request"].build_absolute_uri(
            f"/api/v1/exercises/{obj.slug}/"
        )

    def get_html_url(self, obj: Exercise) -> str:
        return self.context["request"].build_absolute_uri(f"/exercises/{obj.slug}/")

    def get_status(self, obj: Exercise) -> str:
        return self.context.get("statuses", {}).get(obj.pk, "not started")


class EngineSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="The grading-engine that grades here.")
    install = serializers.CharField(help_text="How a learner client installs it.")


class LocalCheckSerializer(serializers.Serializer):
    url = serializers.URLField(help_text="Where `course` downloads it.")
    sha256 = serializers.CharField(help_text="Its SHA-256, hex.")
    bytes = serializers.IntegerField(help_text="Its size.")


class TimeBudgetSerializer(serializers.Serializer):
    seconds = serializers.FloatField(help_text="Wall-clock time one grade may take.")
    why = serializers.CharField(help_text="Where the figure comes from.")


class ExerciseDetailSerializer(ExerciseListSerializer):
    time_budget = serializers.SerializerMethodField()
    lane = serializers.SerializerMethodField()
    check_options = serializers.SerializerMethodField(
        help_text="The exercise's tolerances, for a local check of its visible "
        "cases (`course check`)."
    )
    engine = serializers.SerializerMethodField()
    max_code_bytes = serializers.SerializerMethodField(
        help_text="The largest code a submission may have, in UTF-8 bytes; "
        "`course check` refuses larger code as the server would."
    )
    local_check = serializers.SerializerMethodField(
        help_text="What `course check` needs besides the client: the visible "
        "cases and the values the server computed for them (a bundle, see "
        "docs/client.md), or null when the server has not built it."
    )

    class Meta(ExerciseListSerializer.Meta):
        fields = [
            *ExerciseListSerializer.Meta.fields,
            "prompt",
            "starter",
            "time_budget",
            "lane",
            "harness",
            "check_options",
            "engine",
            "max_code_bytes",
            "local_check",
        ]

    @extend_schema_field(TimeBudgetSerializer)
    def get_time_budget(self, obj: Exercise) -> dict:
        budget = exercise_budget(obj)
        return {"seconds": budget.seconds, "why": budget.why}

    def get_lane(self, obj: Exercise) -> str:
        return exercise_lane(obj)

    def get_check_options(self, obj: Exercise) -> dict[str, float]:
        # Only what judging reads: no solution, no cases, no seed.
        options = obj.options if isinstance(obj.options, dict) else {}
        return {
            key: float(options[key])
            for key in TOLERANCE_OPTIONS
            if isinstance(options.get(key), int | float)
        }

    @extend_schema_field(EngineSerializer)
    def get_engine(self, obj: Exercise) -> dict:
        return engine_info(self.context["request"])

    @extend_schema_field(LocalCheckSerializer(allow_null=True))
    def get_local_check(self, obj: Exercise) -> dict | None:
        found = exercise_local_check(exercise=obj)
        if found is None:
            return None
        return {
            "url": self.context["request"].build_absolute_uri(
                f"/api/v1/exercises/{obj.slug}/local-check/"
            ),
            "sha256": found["sha256"],
            "bytes": found["bytes"],
        }

    def get_max_code_bytes(self, obj: Exercise) -> int:
        return settings.SUBMISSION_MAX_BYTES


class LessonLinkSerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, obj) -> str:
        return self.context["request"].build_absolute_uri(obj.get_absolute_url())


class DiagnosisHintSerializer(serializers.Serializer):
    slug = serializers.CharField()
    summary = serializers.CharField(allow_blank=True)
    lessons = LessonLinkSerializer(many=True, source="lessons.all")


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and other non-strings instead of coercing."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class SubmissionCreateSerializer(serializers.Serializer):
    code = StrictCharField(
        allow_blank=False, trim_whitespace=False, help_text="Python source."
    )


class CheckSerializer(serializers.Serializer):
    name = serializers.CharField()
    passed = serializers.BooleanField()
    message = serializers.CharField(allow_blank=True)
    expected = serializers.CharField(allow_null=True, required=False)
    got = serializers.CharField(allow_null=True, required=False)
    diagnosis = serializers.CharField(allow_null=True, required=False)
    hidden = serializers.BooleanField(required=False)


class SubmissionCreatedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    url = serializers.URLField()


class SubmissionSerializer(serializers.ModelSerializer):
    exercise = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    checks = CheckSerializer(many=True)
    queue_position = serializers.IntegerField(
        allow_null=True,
        help_text="Place among your own queued submissions (1 = your next to be "
        "graded); null once grading started. Others' submissions are not counted.",
    )
    waiting_for = serializers.SerializerMethodField(
        help_text='While queued: "your earlier submission" (it waits behind your '
        'own, one grading slot per learner), "a free grader", or, once set '
        f'aside as a likely loop, "{SET_ASIDE_WAIT}"; null after.'
    )
    timings = serializers.SerializerMethodField()
    time_budget_seconds = serializers.SerializerMethodField(
        help_text="The wall-clock budget of its grade (the exercise's, until it "
        "starts)."
    )
    server_time = serializers.SerializerMethodField(
        help_text="The server's clock now, to count elapsed time against."
    )
    cancel_url = serializers.SerializerMethodField()
    events_url = serializers.SerializerMethodField()
    html_url = serializers.SerializerMethodField(
        help_text="The submission's page: its verdict, the lessons to review."
    )

    class Meta:
        model = Submission
        fields = [
            "id",
            "exercise",
            "status",
            "score",
            "checks",
            "stdout",
            "stderr",
            "queue_position",
            "waiting_for",
            "created_at",
            "started_at",
            "finished_at",
            "timings",
            "time_budget_seconds",
            "server_time",
            "cancel_url",
            "events_url",
            "html_url",
        ]

    def get_timings(self, obj: Submission) -> dict[str, float | None]:
        def ms(start, end):
            return (
                round((end - start).total_seconds() * 1000, 1)
                if start and end
                else None
            )

        now = timezone.now()
        return {
            "queued_ms": ms(obj.created_at, obj.started_at),
            "grade_ms": obj.grade_ms,
            "total_ms": ms(obj.created_at, obj.finished_at),
            # Waiting (queued) or being graded (running) so far; null after.
            "elapsed_ms": None
            if obj.is_terminal
            else ms(obj.started_at or obj.created_at, now),
        }

    def get_waiting_for(self, obj: Submission) -> str | None:
        if obj.status != Submission.Status.QUEUED:
            return None
        if submission_waits_behind_own(obj):
            return "your earlier submission"
        return SET_ASIDE_WAIT if obj.set_aside else "a free grader"

    def get_time_budget_seconds(self, obj: Submission) -> float:
        if obj.time_budget_seconds is not None:
            return obj.time_budget_seconds
        return exercise_budget(obj.exercise).seconds

    def get_server_time(self, obj: Submission) -> str:
        return timezone.now().isoformat()

    def get_cancel_url(self, obj: Submission) -> str:
        return f"/api/v1/submissions/{obj.pk}/cancel/"

    def get_events_url(self, obj: Submission) -> str:
        return f"/api/v1/submissions/{obj.pk}/events/"

    def get_html_url(self, obj: Submission) -> str:
        request = self.context.get("request")
        path = f"/submissions/{obj.pk}/"
        return request.build_absolute_uri(path) if request else path


class GradescopeTestSerializer(serializers.Serializer):
    name = serializers.CharField()
    score = serializers.FloatField()
    max_score = serializers.FloatField()
    status = serializers.ChoiceField(choices=["passed", "failed"])
    output = serializers.CharField(allow_blank=True)
    visibility = serializers.CharField()


class GradescopeResultSerializer(serializers.Serializer):
    score = serializers.FloatField()
    execution_time = serializers.FloatField(allow_null=True)
    output = serializers.CharField(allow_blank=True)
    tests = GradescopeTestSerializer(many=True)
