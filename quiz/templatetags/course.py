from django import template
from django.utils.safestring import mark_safe

from quiz.content.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> str:
    # Safe because render_markdown sanitises with nh3.
    return mark_safe(render_markdown(text))  # noqa: S308
