"""The teaching API's serializers: cohorts, the progress matrix, exercise
regrades, assignments and their gradebook, quizzes and attempts. The views
that use them are teaching.api.views."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from teaching import selectors as sel
from teaching.cohorts import join_url
from teaching.exercise_regrade import direction, regrade_changes
from teaching.models import Assignment, AssignmentItem, Cohort
from teaching.quizzes.models import Quiz, QuizQuestionChange

# Cohorts (output only) -------------------------------------------------------


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


# The progress matrix ---------------------------------------------------------


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


# Exercise regrades -----------------------------------------------------------


class RegradeInSerializer(serializers.Serializer):
    cohort = serializers.IntegerField(
        required=False, help_text="Your cohort; omitted: everyone (superusers only)."
    )


class RegradeStartedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()


class ChangeSerializer(serializers.Serializer):
    submission = serializers.UUIDField(source="submission_id")
    learner = serializers.CharField(source="submission.user.username")
    old_status = serializers.CharField()
    new_status = serializers.CharField()
    old_score = serializers.FloatField(allow_null=True)
    new_score = serializers.FloatField(allow_null=True)
    direction = serializers.SerializerMethodField()

    def get_direction(self, obj) -> str:
        return direction(obj)


class RegradeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    exercise = serializers.CharField(source="exercise.slug")
    scope = serializers.CharField()
    status = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    changed = serializers.IntegerField()
    errors = serializers.IntegerField(
        help_text="Grades the grader itself failed (their old verdicts stay)."
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    changes = serializers.SerializerMethodField()

    @extend_schema_field(ChangeSerializer(many=True))
    def get_changes(self, obj) -> list[dict]:
        return ChangeSerializer(regrade_changes(obj), many=True).data


# Assignments -----------------------------------------------------------------


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


# Quizzes and attempts --------------------------------------------------------


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


class ReopenInSerializer(serializers.Serializer):
    learner = serializers.CharField(help_text="A learner's id or username.")
    closes_at = serializers.DateTimeField(help_text="Their new close (future).")
    extra_attempts = serializers.IntegerField(
        default=1, help_text="Attempts added to what they had (0 to 20)."
    )


class AttemptOverrideInSerializer(serializers.Serializer):
    question = serializers.IntegerField(help_text="The question's number.")
    points = serializers.FloatField(
        allow_null=True, help_text="Its points (0 to its worth); null: the keys'."
    )
    comment = serializers.CharField(
        allow_blank=True, required=False, default="", help_text="Why (required)."
    )


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
