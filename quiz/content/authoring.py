"""What every content admin shares: \\n line endings and a live Markdown preview.

The exercise admin (grader) edits content too, so these live here, below it.
"""

from django import forms
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from quiz.content.markdown import render_markdown, render_markdown_inline

# A preview is for one field being typed; anything larger is not a preview.
PREVIEW_MAX_CHARS = 200_000
PREVIEW_URL_NAME = "quiz_markdown_preview"


def preview_html(text: str, *, inline: bool = False):
    # Both renderers sanitise, so the HTML is safe to show in the admin.
    render = render_markdown_inline if inline else render_markdown
    return format_html(
        '<div class="markdown-preview">{}</div>',
        mark_safe(render(text)),  # noqa: S308
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


class MarkdownPreviewMixin:
    """Mark Markdown fields for static/js/admin_preview.js (live preview).

    `markdown_inline_fields` are shown on the site inline (titles, questions):
    their preview asks for the inline rendering, so it matches the site.
    """

    markdown_fields: tuple[str, ...] = ()
    markdown_inline_fields: tuple[str, ...] = ()
    form = ContentForm

    class Media:
        js = ["js/admin_preview.js"]
        css = {"all": ["css/pygments.css"]}

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is None:
            return field
        url = reverse(f"admin:{PREVIEW_URL_NAME}")
        if db_field.name in self.markdown_fields:
            field.widget.attrs["data-markdown-preview"] = url
        elif db_field.name in self.markdown_inline_fields:
            field.widget.attrs["data-markdown-preview"] = url + "?inline=1"
        return field


@require_POST
def markdown_preview(request: HttpRequest) -> JsonResponse:
    """Sanitised HTML for the posted `text`, as learners will see it
    (`?inline=1`: as a title or question line is shown)."""
    text = request.POST.get("text", "")
    if len(text) > PREVIEW_MAX_CHARS:
        return JsonResponse(
            {"error": f"text longer than {PREVIEW_MAX_CHARS:,} characters"},
            status=400,
        )
    render = render_markdown_inline if request.GET.get("inline") else render_markdown
    return JsonResponse({"html": render(text)})
