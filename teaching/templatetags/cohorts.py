"""`{% load cohorts %}`: `user|can_teach` (show the instructor link) and
`url|url_lines` (a URL that wraps only between its parts)."""

import re

from django import template
from django.utils.html import format_html, format_html_join

from teaching.selectors import user_can_teach

register = template.Library()


@register.filter(name="can_teach")
def can_teach(user) -> bool:
    return user_can_teach(user)


# "http://host:8000/" "cohorts/" "join/" "M6VB2738/": the scheme stays with
# its host, each part keeps its trailing slash.
_URL_PART = re.compile(r"[^/]*(?://[^/]*)?/?")


@register.filter(name="url_lines")
def url_lines(url: str):
    """The URL as unbreakable parts with a break opportunity between them.

    On a phone a long link must wrap, but never inside a code or a port
    ("M6VB27 / 38" cannot be read back), which `overflow-wrap: anywhere`
    does; the text is unchanged for copying.
    """
    parts = [part for part in _URL_PART.findall(str(url)) if part]
    return format_html_join(
        format_html("<wbr>"), '<span class="url-part">{}</span>', ((p,) for p in parts)
    )
