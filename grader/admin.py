"""Admin authoring of exercises, verified on save."""

from django import forms
from django.contrib import admin, messages
from django.contrib.staticfiles import finders
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from grading_engine.exercises.base import load_harness

from grader.authored import declaration_problems
from grader.budgets import exercise_budget, exercise_lane
from grader.models import Exercise
from grader.services import regrade_start
from grader.tasks import verify_version_send
from grader.verify import (
    exercise_is_verified,
    exercise_options_problems,
    exercise_verify_audited,
)
from grader.versions import (
    STALE_AFTER,
    exercise_for_editing,
    exercise_save,
    exercise_version_state,
)
from grader.views import EDITOR_JS  # built at setup; without it, textareas
from quiz.content.authoring import ContentForm, MarkdownPreviewMixin
from quiz.core.audit import AuditedAdminMixin, audit_snapshot


def _known_solutions(value, label: str, example: str) -> list:
    """A JSON list of {name, code, ...} items, or a message saying what is wrong."""
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise forms.ValidationError(f"Expected a JSON list like {example}.")
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(key), str) and item[key].strip()
            for key in ("name", "code")
        ):
            raise forms.ValidationError(
                f"{label} {number} needs text 'name' and 'code'."
            )
    return value


_CODE = {"spellcheck": "false", "autocapitalize": "off", "autocomplete": "off"}


class ExerciseForm(ContentForm):
    class Meta:
        model = Exercise
        fields = "__all__"
        help_texts = {
            "options": 'Overrides, e.g. {"rtol": 1e-4, "atol": 1e-5} (tolerances, '
            'for harnesses that compare tensors), {"time_budget_seconds": 5} '
            '(instead of the measured budget) or {"lane": "heavy"}.',
            "published": "Learners see it only once a version verifies: a save "
            "that changes what is graded is checked in the background, and "
            "learners keep the live version until it passes.",
        }
        # A code editor for each Python field (static/js/editor.js); each
        # stays a textarea the form posts, and is one without JavaScript.
        widgets = {
            name: forms.Textarea(attrs={"data-code-editor": "", **_CODE})
            for name in ("solution", "starter")
        } | {
            name: forms.Textarea(attrs={"data-code-list": kind, **_CODE})
            for name, kind in (
                ("wrong_solutions", "wrong"),
                ("right_solutions", "right"),
            )
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
        return _known_solutions(
            self.cleaned_data["wrong_solutions"],
            "Wrong solution",
            '[{"name": "...", "diagnosis": "...", "code": "..."}]',
        )

    def clean_declaration(self) -> dict:
        """Empty for a built-in harness; an object for `authored` (checked
        with the rest of the exercise in clean)."""
        value = self.cleaned_data["declaration"]
        if value in (None, ""):
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError(
                'Expected a JSON object like {"inputs": [...], "cases": [...], '
                '"outputs": [...]}.'
            )
        return value

    def clean_right_solutions(self) -> list:
        return _known_solutions(
            self.cleaned_data["right_solutions"],
            "Right variant",
            '[{"name": "...", "code": "..."}]',
        )

    def clean(self):
        cleaned = super().clean()
        harness, options = cleaned.get("harness"), cleaned.get("options")
        if harness and options is not None:
            for problem in exercise_options_problems(harness=harness, options=options):
                self.add_error("options", problem)
        fields = ("declaration", "entry_point", "solution", "wrong_solutions")
        if harness and all(name in cleaned for name in fields):
            for field, problem in declaration_problems(
                harness=harness,
                declaration=cleaned["declaration"],
                entry_point=cleaned["entry_point"],
                solution=cleaned["solution"],
                wrong_solutions=cleaned["wrong_solutions"],
            ):
                self.add_error(field, problem)
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
        "version",
        "verified",
        "verified_at",
    ]
    list_filter = ["published", "harness"]
    list_select_related = ["lesson"]
    search_fields = ["slug", "title", "prompt"]
    autocomplete_fields = ["lesson"]
    readonly_fields = [
        "version_status",
        "verified_at",
        "verification_report",
        "time_budget",
        "source_path",
    ]
    markdown_fields = ("prompt",)
    actions = ["verify_selected", "regrade_selected"]
    fieldsets = [
        # Versions first: after a save, its verification's progress is here.
        (None, {"fields": ["slug", "title", "lesson", "published", "version_status"]}),
        (
            "Grading",
            {
                "fields": [
                    "harness",
                    "entry_point",
                    "signature",
                    "declaration",
                    "options",
                ]
            },
        ),
        ("Learner view", {"fields": ["prompt", "starter"]}),
        ("Answers", {"fields": ["solution", "wrong_solutions", "right_solutions"]}),
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

    @property
    def media(self):
        """The prompt's Markdown preview, the versions' live progress, and
        the code editors where their bundle was built. (A class's own Media
        hides its mixin's: the preview's was missing from this page.)"""
        media = (
            super().media
            + forms.Media(MarkdownPreviewMixin.Media)
            + forms.Media(js=["js/exercise_versions.js"])
        )
        if finders.find(EDITOR_JS) is None:
            return media
        return media + forms.Media(
            js=[forms.Script(EDITOR_JS, defer=True)],
            css={"all": ["css/editor.css", "css/admin_code.css"]},
        )

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
            "<li><strong>{}</strong>: {}{}</li>",
            _failed_rows(result.get("failed", [])),
        )
        return format_html(
            "<p>{} (score {}) at {}{}</p><ul>{}</ul>",
            result.get("status"),
            result.get("score"),
            result.get("checked_at", "?"),
            "" if exercise_is_verified(exercise=obj) else "; out of date",
            failed,
        )

    @admin.display(description="Versions")
    def version_status(self, obj: Exercise):
        """The live version and the newest save's verification, with progress.

        static/js/exercise_versions.js polls the JSON view below to update it;
        without JavaScript, reloading the page does.
        """
        if obj.pk is None:
            return "Saved as version 1, then verified in the background."
        state = exercise_version_state(exercise=obj)
        url = reverse("admin:grader_exercise_verification", args=[obj.pk])
        return format_html(
            '<div class="exercise-versions" data-url="{}" aria-live="polite">{}</div>',
            url,
            version_status_html(state),
        )

    def get_urls(self):
        urls = [
            path(
                "<int:object_id>/verification/",
                self.admin_site.admin_view(self.verification_view),
                name="grader_exercise_verification",
            )
        ]
        return urls + super().get_urls()

    def verification_view(self, request, object_id: int):
        """The verification state as JSON, for the change page's progress."""
        exercise = Exercise.objects.filter(pk=object_id).first()
        if exercise is None or not self.has_view_permission(request, exercise):
            raise Http404("No such exercise.")
        state = exercise_version_state(exercise=exercise)
        return JsonResponse({**state, "html": version_status_html(state)})

    def get_object(self, request, object_id, from_field=None):
        """The exercise with its newest unverified save in the form, if any.

        The author goes on editing what they saved (say, to fix a failing
        solution), while the row learners read keeps the live version.
        """
        obj = super().get_object(request, object_id, from_field)
        if obj is not None and request.method == "GET":
            obj = exercise_for_editing(obj)
        return obj

    def save_model(self, request, obj: Exercise, form, change):
        """Save slug and lesson now; what is graded goes live once it verifies.

        grader.versions decides; its one message replaces Django's "changed
        successfully", so the page never says two contradictory things.
        """
        before = Exercise.objects.filter(pk=obj.pk).first() if change else None
        # What AuditedAdminMixin.save_related compares the saved row with.
        request._audit_before = audit_snapshot(before) if before else None
        request._exercise_save = exercise_save(
            exercise=obj,
            actor=request.user,
            creating=not change,
            send=verify_version_send,
        )

    def message_user(self, request, message, level=messages.INFO, *args, **kwargs):
        outcome = getattr(request, "_exercise_save", None)
        if outcome is not None and level == messages.SUCCESS:
            request._exercise_save = None  # Django's own message after a save
            message, level = outcome.message, outcome.level
        super().message_user(request, message, level, *args, **kwargs)

    def _after_save(self, request, obj, response):
        """Stay on the change page while a version verifies: its progress is there."""
        outcome = getattr(request, "_exercise_save_done", None)
        if (
            outcome is not None
            and outcome.verifying
            and "_addanother" not in request.POST
        ):
            return HttpResponseRedirect(
                reverse("admin:grader_exercise_change", args=[obj.pk])
            )
        return response

    def response_add(self, request, obj, post_url_continue=None):
        request._exercise_save_done = getattr(request, "_exercise_save", None)
        return self._after_save(
            request, obj, super().response_add(request, obj, post_url_continue)
        )

    def response_change(self, request, obj):
        request._exercise_save_done = getattr(request, "_exercise_save", None)
        return self._after_save(request, obj, super().response_change(request, obj))

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


def _failed_rows(items: list[dict]):
    """(name, message, the values compared) of each failed item."""
    for item in items:
        values = ""
        if "expected" in item or "got" in item:
            values = format_html(
                '<dl class="expected-got"><dt>expected</dt><dd><code>{}</code></dd>'
                "<dt>got</dt><dd><code>{}</code></dd></dl>",
                item.get("expected", "?"),
                item.get("got", "?"),
            )
        yield item["name"], item["message"], values


def version_status_html(state: dict):
    """The change page's Versions field, from exercise_version_state."""
    live = state["live_version"]
    if live:
        shown = "published" if state["published"] else "unpublished"
        head = format_html("Live: version {} ({}).", live, shown)
    else:
        head = "No verified version yet: learners do not see it."
    draft = state["draft"]
    if draft is None:
        return head
    number, done, total = draft["version"], draft["done"], draft["total"]
    if draft["status"] in ("queued", "running") and draft.get("stale"):
        return format_html(
            '{} <span class="version-draft" data-status="stale">Version {} has '
            "waited {} minutes or more without finishing: is a grading worker "
            "running? Save again to queue it anew.</span>",
            head,
            number,
            int(STALE_AFTER.total_seconds() // 60),
        )
    if draft["status"] in ("queued", "running"):
        return format_html(
            '{} <span class="version-draft" data-status="{}">Version {}: verifying, '
            '{} of {} grades done{}.</span> <progress max="{}" value="{}">{}/{}'
            '</progress> <a href="">Refresh</a>',
            head,
            draft["status"],
            number,
            done,
            total,
            f" (now: {draft['step']})" if draft["step"] else "",
            total,
            done,
            done,
            total,
        )
    if draft["status"] == "failed":
        failed = format_html_join(
            "", "<li><strong>{}</strong>: {}{}</li>", _failed_rows(draft["failed"])
        )
        keeps = f"learners keep version {live}" if live else "it stays unpublished"
        return format_html(
            '{} <span class="version-draft" data-status="failed">Version {} did not '
            "verify, so {}. Fix it and save again.</span><ul>{}</ul>",
            head,
            number,
            keeps,
            failed,
        )
    return head
