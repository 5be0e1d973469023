"""Admin authoring of course content: sections, lessons, self-checks, figures,
diagnoses, question templates and quiz-only questions."""

from django import forms
from django.contrib import admin
from django.urls import path
from django.utils.html import format_html

from quiz.content.authoring import (
    PREVIEW_URL_NAME,
    ContentForm,
    MarkdownPreviewMixin,
    markdown_preview,
    preview_html,
)
from quiz.content.models import (
    Diagnosis,
    Figure,
    FollowUp,
    Lesson,
    Question,
    QuestionTemplate,
    QuizQuestion,
    Section,
)
from quiz.content.quiz_questions import (
    QuizQuestionInvalid,
    check,
    missing_diagnoses,
    spec_from_fields,
    values_of,
)
from quiz.content.tree import question_problem
from quiz.core.audit import AuditedAdminMixin


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


class QuizQuestionForm(ContentForm):
    """Hold a quiz-only question to the loader's rules (quiz_questions.check),
    so what the admin saves exports to a file that loads back the same."""

    # Where a problem with a file key shows on the form.
    _FIELDS = {
        "slug": "slug",
        "title": "title",
        "section": "section",
        "lessons": "lessons",
        "kind": "kind",
        "prompt": "prompt",
        "choices": "choices",
        "tolerance": "tolerance",
        "explanation": "explanation",
        "misconceptions": "misconceptions",
    }

    def clean(self):
        cleaned = super().clean()
        section = cleaned.get("section")
        if self.errors or section is None:
            return cleaned  # the fields' own errors come first
        kind = cleaned.get("kind")
        spec = spec_from_fields(
            slug=cleaned.get("slug"),
            title=cleaned.get("title"),
            section=section.slug,
            lessons=[lesson.slug for lesson in cleaned.get("lessons") or []],
            kind=kind,
            prompt=cleaned.get("prompt"),
            choices=cleaned.get("choices"),
            correct_choice=cleaned.get("correct_choice"),
            numeric_answer=cleaned.get("numeric_answer"),
            tolerance=cleaned.get("tolerance"),
            relative_tolerance=cleaned.get("relative_tolerance"),
            explanation=cleaned.get("explanation") or "",
            misconceptions=cleaned.get("misconceptions") or [],
        )
        try:
            spec = check(spec)
        except QuizQuestionInvalid as exc:
            field = self._FIELDS.get(exc.key or "")
            if exc.key == "answer":
                field = "correct_choice" if kind == "choice" else "numeric_answer"
            raise forms.ValidationError(
                {field: str(exc)} if field in self.fields else str(exc)
            ) from None
        missing = missing_diagnoses(spec)
        if missing:
            raise forms.ValidationError(
                {"misconceptions": f"No such {', '.join(missing)}."}
            )
        # Store what a load of its exported file would store.
        cleaned.update(values_of(spec))
        return cleaned


class FollowUpInline(MarkdownPreviewMixin, admin.StackedInline):
    model = FollowUp
    extra = 0
    fields = ["order", "question", "answer"]
    ordering = ["order"]
    markdown_fields = ("answer",)
    markdown_inline_fields = ("question",)


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
        return preview_html(obj.description)


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
    markdown_fields = ("body",)
    markdown_inline_fields = ("title", "question", "takeaway")
    fieldsets = [
        (None, {"fields": ["section", "order", "title", "slug", "question"]}),
        ("Answer", {"fields": ["takeaway", "body", "body_preview"]}),
        ("Details", {"fields": ["tags", "reading_time", "source_path", "updated_at"]}),
    ]

    @admin.display(description="Rendered answer (as saved)")
    def body_preview(self, obj: Lesson):
        return preview_html(obj.body)

    def get_urls(self):
        # The preview serves every content admin; it lives here so that
        # config/urls.py needs no entry and admin_view keeps it staff-only.
        preview = self.admin_site.admin_view(markdown_preview)
        return [
            path("preview/", preview, name=PREVIEW_URL_NAME),
            *super().get_urls(),
        ]


@admin.register(FollowUp)
class FollowUpAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    list_display = ["question", "lesson", "order"]
    list_filter = ["lesson__section"]
    list_select_related = ["lesson"]
    search_fields = ["question", "answer"]
    autocomplete_fields = ["lesson"]
    markdown_fields = ("answer",)
    markdown_inline_fields = ("question",)


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


@admin.register(Diagnosis)
class DiagnosisAdmin(AuditedAdminMixin, admin.ModelAdmin):
    list_display = ["slug", "summary", "lesson_list"]
    search_fields = ["slug", "summary"]
    filter_horizontal = ["lessons"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("lessons")

    @admin.display(description="Lessons")
    def lesson_list(self, obj: Diagnosis) -> str:
        return ", ".join(lesson.slug for lesson in obj.lessons.all()) or "—"


@admin.register(QuestionTemplate)
class QuestionTemplateAdmin(AuditedAdminMixin, admin.ModelAdmin):
    """A template's spec as JSON, checked by the engine before it is saved."""

    list_display = ["slug", "title", "section", "kind", "updated_at"]
    list_filter = ["section", "kind"]
    search_fields = ["slug", "title"]
    filter_horizontal = ["lessons"]
    readonly_fields = ["source_path", "updated_at"]


@admin.register(QuizQuestion)
class QuizQuestionAdmin(AuditedAdminMixin, MarkdownPreviewMixin, admin.ModelAdmin):
    """A question only quizzes show, checked as load_content checks its file."""

    form = QuizQuestionForm
    list_display = ["slug", "title", "section", "kind", "updated_at"]
    list_filter = ["section", "kind"]
    list_select_related = ["section"]
    search_fields = ["slug", "title", "prompt"]
    filter_horizontal = ["lessons"]
    readonly_fields = ["source_path", "updated_at"]
    markdown_fields = ("prompt", "explanation")
    fieldsets = [
        (None, {"fields": ["slug", "title", "section", "lessons", "kind", "prompt"]}),
        (
            "Answer",
            {
                "fields": [
                    "choices",
                    "correct_choice",
                    "numeric_answer",
                    "tolerance",
                    "relative_tolerance",
                    "explanation",
                ]
            },
        ),
        (
            "Misconceptions",
            {
                "fields": ["misconceptions"],
                "description": 'Named wrong answers, as JSON: [{"choice": 1, '
                '"diagnosis": "counted-head-twice", "says": "counted the tied '
                'head twice"}] ("answer": a number for a numeric question).',
            },
        ),
        ("Source", {"fields": ["source_path", "updated_at"]}),
    ]
