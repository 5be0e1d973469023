from django import template
from django.utils.safestring import mark_safe

from quiz.content.markdown import render_markdown
from quiz.core.numbers import format_number

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> str:
    # Safe because render_markdown sanitises with nh3.
    return mark_safe(render_markdown(text))  # noqa: S308


@register.filter(name="number")
def number_filter(value) -> str:
    """Thousands separators, no trailing zeros (quiz.core.numbers)."""
    return format_number(value)
