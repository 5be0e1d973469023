from django import template
from django.utils.safestring import mark_safe

from quiz.content.markdown import render_markdown, render_markdown_inline
from quiz.core.numbers import format_number

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str, mode: str = "") -> str:
    """Every Markdown field goes through here: `|markdown` for blocks,
    `|markdown:"inline"` for titles, questions and other one-line fields."""
    if mode not in ("", "inline"):
        raise template.TemplateSyntaxError(f"markdown: unknown mode {mode!r}")
    render = render_markdown_inline if mode == "inline" else render_markdown
    # Safe because both renderers sanitise with nh3.
    return mark_safe(render(text))  # noqa: S308


@register.filter(name="number")
def number_filter(value) -> str:
    """Thousands separators, no trailing zeros (quiz.core.numbers)."""
    return format_number(value)
