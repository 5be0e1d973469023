"""`{% when moment %}`: a UTC time that the page shows in the viewer's zone.

The server renders UTC (so the page is right without JavaScript, and says
so); static/js/localtime.js rewrites every `time[data-local]` into the
browser's own time zone.
"""

from datetime import UTC

from django import template
from django.utils import timezone
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def when(moment):
    if moment is None:
        return "–"
    utc = timezone.localtime(moment, UTC)
    return format_html(
        '<time datetime="{}" data-local>{} UTC</time>',
        utc.isoformat(),
        utc.strftime("%Y-%m-%d %H:%M"),
    )
