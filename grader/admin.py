"""Admin authoring of exercises, verified on save."""

from django import forms
from django.contrib import admin, messages
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from grading_engine.exercises.base import load_harness

from grader.budgets import exercise_budget, exercise_lane
from grader.models import Exercise
from grader.services import regrade_start
from grader.verify import (
    exercise_is_verified,
    exercise_options_problems,
    exercise_verify,
    exercise_verify_audited,
)
from quiz.content.authoring import ContentForm, MarkdownPreviewMixin
from quiz.core.audit import AuditedAdminMixin


class ExerciseForm(ContentForm):
    class Meta:
        model = Exercise
        fields = "__all__"
        help_texts = {
            "options": 'Overrides, e.g. {"rtol": 1e-4, "atol": 1e-5} (tolerances, '
            'for harnesses that compare tensors), {"time_budget_seconds": 5} '
            '(instead of the measured budget) or {"lane": "heavy"}.',
            "published": "Published only if the reference solution passes its own "
            "checks when you save.",
        }

    def clean_harness(self) -> str:
        harness = self.cleaned_data["harness"]
        try:
            load_harness(harness)
        except LookupError:
            module = harness.replace("-", "_")
            raise forms.ValidationError(
                f"No grading module engine/grading_engine/exercises/{module}.py: "
                "a harness must exist in the code before an exercise can use it."
            ) from None
        return harness

    def clean_entry_point(self) -> str:
        entry_point = self.cleaned_data["entry_point"].strip()
        if not entry_point.isidentifier():
            raise forms.ValidationError(
                f"{entry_point!r} is not a Python function name."
            )
        return entry_point

    def clean_wrong_solutions(self) -> list:
        wrong = self.cleaned_data["wrong_solutions"]
        if wrong in (None, ""):
            return []
        if not isinstance(wrong, list):
            raise forms.ValidationError(
                'Expected a JSON list like [{"name": "...", "diagnosis": "...", '
                '"code": "..."}].'
            )
        for number, item in enumerate(wrong, start=1):
            if not isinstance(item, dict) or not all(
                isinstance(item.get(key), str) and item[key].strip()
                for key in ("name", "code")
            ):
                raise forms.ValidationError(
                    f"Wrong solution {number} needs text 'name' and 'code'."
                )
        return wrong

    def clean(self):
        cleaned = super().clean()
        harness, options = cleaned.get("harness"), cleaned.get("options")
        if harness and options is not None:
            for problem in exercise_options_problems(harness=harness, options=options):
                self.add_error("options", problem)
        return cleaned


@admin.register(Exercise)
class ExerciseAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    form = ExerciseForm
    list_display = [
        "slug",
        "title",
        "lesson",
        "harness",
        "published",
        "verified",
        "verified_at",
    ]
    list_filter = ["published", "harness"]
    list_select_related = ["lesson"]
    search_fields = ["slug", "title", "prompt"]
    autocomplete_fields = ["lesson"]
    readonly_fields = [
        "verified_at",
        "verification_report",
        "time_budget",
        "source_path",
    ]
    markdown_fields = ("prompt",)
    actions = ["verify_selected", "regrade_selected"]
    fieldsets = [
        (None, {"fields": ["slug", "title", "lesson", "published"]}),
        ("Grading", {"fields": ["harness", "entry_point", "signature", "options"]}),
        ("Learner view", {"fields": ["prompt", "starter"]}),
        ("Answers", {"fields": ["solution", "wrong_solutions"]}),
        (
            "Verification",
            {
                "fields": [
                    "verified_at",
                    "verification_report",
                    "time_budget",
                    "source_path",
                ]
            },
        ),
    ]

    @admin.display(boolean=True, description="Verified")
    def verified(self, obj: Exercise) -> bool:
        return exercise_is_verified(exercise=obj)

    @admin.action(description="Regrade every submission of the selected exercises")
    def regrade_selected(self, request, queryset):
        for exercise in queryset:
            regrade = regrade_start(
                exercise=exercise, requested_by=request.user, scope="everyone"
            )
            url = reverse("instructor-regrade", args=[regrade.pk])
            self.message_user(
                request,
                format_html(
                    "{}: regrading {} submissions in the background. "
                    '<a href="{}">Follow it</a>.',
                    exercise.slug,
                    regrade.total,
                    url,
                ),
            )

    @admin.display(description="Time budget")
    def time_budget(self, obj: Exercise) -> str:
        budget = exercise_budget(obj)
        return f"{budget.label} per grade ({budget.why}); lane: {exercise_lane(obj)}"

    @admin.display(description="Last reference-solution grade")
    def verification_report(self, obj: Exercise):
        result = obj.verification or {}
        if not result:
            return "Not verified yet."
        failed = format_html_join(
            "",
            "<li><strong>{}</strong>: {}</li>",
            ((item["name"], item["message"]) for item in result.get("failed", [])),
        )
        return format_html(
            "<p>{} (score {}) at {}{}</p><ul>{}</ul>",
            result.get("status"),
            result.get("score"),
            result.get("checked_at", "?"),
            "" if exercise_is_verified(exercise=obj) else "; out of date",
            failed,
        )

    def save_model(self, request, obj: Exercise, form, change):
        """Grade the reference solution first; publish only what passes.

        Verification runs when the stored one does not describe the exercise
        as saved (new, or harness, entry point, solution, options or harness
        code changed), so a title edit does not wait for the grader.
        """
        wanted_published = obj.published
        if not exercise_is_verified(exercise=obj):
            outcome = exercise_verify(exercise=obj, save=False)
            if not outcome.passed:
                what = "saved UNPUBLISHED" if wanted_published else "saved"
                messages.error(
                    request,
                    f"{obj.slug} was {what}: its reference solution does not pass "
                    f"its own checks ({outcome.verification['status']}). Failed: "
                    f"{outcome.summary()}",
                )
            else:
                messages.success(
                    request,
                    f"{obj.slug}: the reference solution passed all "
                    f"{outcome.verification.get('checks', 0)} checks.",
                )
        super().save_model(request, obj, form, change)

    @admin.action(description="Verify selected exercises (grade their solutions)")
    def verify_selected(self, request, queryset):
        passed, failed = [], []
        for exercise in queryset:
            outcome = exercise_verify_audited(exercise=exercise, actor=request.user)
            (passed if outcome.passed else failed).append(exercise.slug)
            if not outcome.passed:
                messages.error(
                    request,
                    f"{exercise.slug} is unpublished: {outcome.summary()}",
                )
        if passed:
            messages.success(request, f"Verified {len(passed)}: {', '.join(passed)}.")
