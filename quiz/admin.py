"""Admin authoring of course content, cohorts and the (read-only) audit trail."""

from django import forms
from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from quiz.audit import AuditedAdminMixin
from quiz.content_files import question_problem
from quiz.markdown import render_markdown
from quiz.models import (
    AuditEntry,
    Cohort,
    CohortMembership,
    Figure,
    FollowUp,
    Lesson,
    Question,
    Section,
)

# A preview is for one field being typed; anything larger is not a preview.
PREVIEW_MAX_CHARS = 200_000
PREVIEW_URL_NAME = "quiz_markdown_preview"


def _preview(text: str):
    # render_markdown sanitises, so the HTML is safe to show in the admin.
    return format_html(
        '<div class="markdown-preview">{}</div>',
        mark_safe(render_markdown(text)),  # noqa: S308
    )


class ContentForm(forms.ModelForm):
    """Store text with the \\n line endings the content/ files use.

    Browsers post textareas with \\r\\n; normalising here keeps an admin edit,
    its export and its reload byte-for-byte the same.
    """

    def clean(self):
        cleaned = super().clean()
        for name, value in cleaned.items():
            if isinstance(value, str) and "\r" in value:
                cleaned[name] = value.replace("\r\n", "\n").replace("\r", "\n")
        return cleaned


class LessonForm(ContentForm):
    def clean_tags(self):
        tags = self.cleaned_data["tags"]
        if tags in (None, ""):
            return []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise forms.ValidationError('Expected a JSON list of words: ["tying"].')
        return tags


class QuestionForm(ContentForm):
    """Hold a self-check to the rules of the content files, so it can export."""

    def clean(self):
        cleaned = super().clean()
        kind = cleaned.get("kind")
        answer = {
            "choice": cleaned.get("correct_choice"),
            "numeric": cleaned.get("numeric_answer"),
            "recall": cleaned.get("model_answer"),
        }.get(kind)
        item = {
            "kind": kind,
            "prompt": cleaned.get("prompt"),
            "choices": cleaned.get("choices"),
            "answer": answer,
            "tolerance": cleaned.get("tolerance") or 0,
        }
        problem = question_problem(item)
        if problem and kind and cleaned.get("prompt"):
            raise forms.ValidationError(f"This {kind} question: {problem}.")
        return cleaned


class MarkdownPreviewMixin:
    """Mark Markdown textareas for static/js/admin_preview.js (live preview)."""

    markdown_fields: tuple[str, ...] = ()
    form = ContentForm

    class Media:
        js = ["js/admin_preview.js"]
        css = {"all": ["css/pygments.css"]}

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None and db_field.name in self.markdown_fields:
            field.widget.attrs["data-markdown-preview"] = reverse(
                f"admin:{PREVIEW_URL_NAME}"
            )
        return field


class FollowUpInline(MarkdownPreviewMixin, admin.StackedInline):
    model = FollowUp
    extra = 0
    fields = ["order", "question", "answer"]
    ordering = ["order"]
    markdown_fields = ("answer",)


class QuestionInline(MarkdownPreviewMixin, admin.StackedInline):
    model = Question
    form = QuestionForm
    extra = 0
    fields = [
        "order",
        "kind",
        "prompt",
        "choices",
        "correct_choice",
        "numeric_answer",
        "tolerance",
        "model_answer",
        "explanation",
    ]
    ordering = ["order"]
    markdown_fields = ("prompt", "explanation")


@admin.register(Section)
class SectionAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    list_display = ["order", "title", "slug", "lesson_count"]
    list_display_links = ["title"]
    ordering = ["order"]
    search_fields = ["title", "slug", "description"]
    prepopulated_fields = {"slug": ["title"]}
    readonly_fields = ["description_preview"]
    markdown_fields = ("description",)

    @admin.display(description="Lessons")
    def lesson_count(self, obj: Section) -> int:
        return obj.lessons.count()

    @admin.display(description="Rendered description (as saved)")
    def description_preview(self, obj: Section):
        return _preview(obj.description)


@admin.register(Lesson)
class LessonAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    list_display = ["title", "section", "order", "slug", "reading_time", "updated_at"]
    list_filter = ["section"]
    list_select_related = ["section"]
    search_fields = ["title", "slug", "question", "body"]
    ordering = ["section__order", "order"]
    prepopulated_fields = {"slug": ["title"]}
    form = LessonForm
    inlines = [FollowUpInline, QuestionInline]
    readonly_fields = ["body_preview", "source_path", "updated_at"]
    markdown_fields = ("body", "takeaway")
    fieldsets = [
        (None, {"fields": ["section", "order", "title", "slug", "question"]}),
        ("Answer", {"fields": ["takeaway", "body", "body_preview"]}),
        ("Details", {"fields": ["tags", "reading_time", "source_path", "updated_at"]}),
    ]

    @admin.display(description="Rendered answer (as saved)")
    def body_preview(self, obj: Lesson):
        return _preview(obj.body)

    def get_urls(self):
        # The preview serves every content admin; it lives here so that
        # config/urls.py needs no entry and admin_view keeps it staff-only.
        preview = self.admin_site.admin_view(markdown_preview)
        return [
            path("preview/", preview, name=PREVIEW_URL_NAME),
            *super().get_urls(),
        ]


@require_POST
def markdown_preview(request: HttpRequest) -> JsonResponse:
    """Sanitised HTML for the posted `text`, as learners will see it."""
    text = request.POST.get("text", "")
    if len(text) > PREVIEW_MAX_CHARS:
        return JsonResponse(
            {"error": f"text longer than {PREVIEW_MAX_CHARS:,} characters"},
            status=400,
        )
    return JsonResponse({"html": render_markdown(text)})


@admin.register(FollowUp)
class FollowUpAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    list_display = ["question", "lesson", "order"]
    list_filter = ["lesson__section"]
    list_select_related = ["lesson"]
    search_fields = ["question", "answer"]
    autocomplete_fields = ["lesson"]
    markdown_fields = ("answer",)


@admin.register(Question)
class QuestionAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    form = QuestionForm
    list_display = ["prompt", "kind", "lesson", "order"]
    list_filter = ["kind", "lesson__section"]
    list_select_related = ["lesson"]
    search_fields = ["prompt", "explanation"]
    autocomplete_fields = ["lesson"]
    markdown_fields = ("prompt", "explanation")


@admin.register(Figure)
class FigureAdmin(admin.ModelAdmin):
    """Figures are generated from content/figures/*.py; the admin only shows them."""

    list_display = ["name", "caption", "updated_at"]
    search_fields = ["name", "caption"]
    fields = ["name", "caption", "chart", "source_hash", "updated_at"]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="Chart")
    def chart(self, obj: Figure):
        return format_html('<img src="{}" alt="{}">', obj.get_absolute_url(), obj.name)


class CohortMembershipInline(admin.TabularInline):
    model = CohortMembership
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["joined_at"]


@admin.register(Cohort)
class CohortAdmin(AuditedAdminMixin, admin.ModelAdmin):
    list_display = ["name", "owner", "join_code", "member_count", "created_at"]
    list_select_related = ["owner"]
    search_fields = ["name", "join_code", "owner__username"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["created_at"]
    inlines = [CohortMembershipInline]

    @admin.display(description="Members")
    def member_count(self, obj: Cohort) -> int:
        return obj.memberships.count()


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The trail is evidence: nobody, superusers included, may edit it here."""

    list_display = ["created_at", "actor_name", "action", "model", "object_repr"]
    list_filter = [
        "action",
        "model",
        ("actor", admin.RelatedOnlyFieldListFilter),
    ]
    list_select_related = ["actor"]
    search_fields = ["object_repr", "object_id", "model", "actor__username"]
    date_hierarchy = "created_at"
    fields = [
        "created_at",
        "actor",
        "action",
        "model",
        "object_id",
        "object_repr",
        "changes_table",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Actor", ordering="actor__username")
    def actor_name(self, obj: AuditEntry) -> str:
        return obj.actor.get_username() if obj.actor else "(command)"

    @admin.display(description="Changes (old → new)")
    def changes_table(self, obj: AuditEntry):
        if not obj.changes:
            return "—"
        rows = format_html_join(
            "",
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>",
            (
                (name, _shown(pair[0]), _shown(pair[1]))
                for name, pair in obj.changes.items()
            ),
        )
        return format_html(
            "<table><thead><tr><th>field</th><th>old</th><th>new</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )


def _shown(value) -> str:
    return "—" if value is None else str(value)
