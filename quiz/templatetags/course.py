from django import template
from django.utils.safestring import mark_safe

from quiz.content.markdown import render_markdown, render_markdown_inline
from quiz.core.numbers import format_number
from quiz.templatetags.scores import percent_text, points_text

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


@register.filter(name="percent")
def percent_filter(score) -> str:
    """A score (0-1) as every page writes it: "62.5%" (quiz.templatetags.scores:
    one decimal place at most, half away from zero); "" for no score."""
    return percent_text(score)


@register.filter(name="points_of")
def points_of_filter(points, possible) -> str:
    """`{{ points|points_of:possible }}`: "2.5 of 4 points", as every page
    writes points (quiz.templatetags.scores)."""
    return points_text(points, possible)
