from django.contrib import admin
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from quiz.markdown import render_markdown
from quiz.models import FollowUp, Lesson, Question, Section


def _preview(text: str):
    # render_markdown sanitises, so the HTML is safe to show in the admin.
    return format_html(
        '<div class="markdown-preview">{}</div>',
        mark_safe(render_markdown(text)),  # noqa: S308
    )


class FollowUpInline(admin.StackedInline):
    model = FollowUp
    extra = 0
    fields = ["order", "question", "answer"]
    ordering = ["order"]


class QuestionInline(admin.StackedInline):
    model = Question
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


@admin.register(Section)
class SectionAdmin(admin.ModelAdmin):
    list_display = ["order", "title", "slug", "lesson_count"]
    list_display_links = ["title"]
    ordering = ["order"]
    prepopulated_fields = {"slug": ["title"]}
    readonly_fields = ["description_preview"]

    @admin.display(description="Lessons")
    def lesson_count(self, obj: Section) -> int:
        return obj.lessons.count()

    @admin.display(description="Rendered description")
    def description_preview(self, obj: Section):
        return _preview(obj.description)


@admin.register(Lesson)
class LessonAdmin(admin.ModelAdmin):
    list_display = ["title", "section", "order", "slug", "reading_time", "updated_at"]
    list_filter = ["section"]
    list_select_related = ["section"]
    search_fields = ["title", "slug", "question", "body"]
    ordering = ["section__order", "order"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [FollowUpInline, QuestionInline]
    readonly_fields = ["body_preview", "source_path", "updated_at"]
    fieldsets = [
        (None, {"fields": ["section", "order", "title", "slug", "question"]}),
        ("Answer", {"fields": ["takeaway", "body", "body_preview"]}),
        ("Details", {"fields": ["tags", "reading_time", "source_path", "updated_at"]}),
    ]

    @admin.display(description="Rendered answer (as saved)")
    def body_preview(self, obj: Lesson):
        return _preview(obj.body)


@admin.register(FollowUp)
class FollowUpAdmin(admin.ModelAdmin):
    list_display = ["question", "lesson", "order"]
    list_filter = ["lesson__section"]
    list_select_related = ["lesson"]
    search_fields = ["question", "answer"]
    autocomplete_fields = ["lesson"]


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["prompt", "kind", "lesson", "order"]
    list_filter = ["kind", "lesson__section"]
    list_select_related = ["lesson"]
    search_fields = ["prompt", "explanation"]
    autocomplete_fields = ["lesson"]
