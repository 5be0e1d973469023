"""Markdown to safe HTML for lessons and learner text.

Content is written by admins and, later, learners; either way it is untrusted
HTML-wise: render with Python-Markdown (Pygments highlighting), then let nh3
(the Ammonia sanitiser) keep only the tags and attributes we emit.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

import markdown as md
import nh3

from quiz.content.figures import FIGURE_REF

_EXTENSIONS = ["fenced_code", "codehilite", "tables", "sane_lists", "attr_list"]
_EXTENSION_CONFIGS = {"codehilite": {"css_class": "highlight", "guess_lang": False}}

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt",
    "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
    "img", "kbd", "li", "ol", "p", "pre", "span", "strong", "sub", "sup", "table",
    "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height", "loading"},
    "span": {"class"},
    "div": {"class"},
    "figure": {"class"},
    "code": {"class"},
    "pre": {"class"},
    "td": {"align"},
    "th": {"align"},
}


# Blocks that scroll sideways (code, wide tables) must be reachable by
# keyboard (WCAG 2.1.1, axe's scrollable-region-focusable): added after nh3,
# so authors still cannot set attributes of their own.
_SCROLLABLE = re.compile(r"<(pre|table)(?=[\s>])")


def _figure_block(match) -> str:
    # A raw HTML block (blank lines around it) so Markdown leaves it whole.
    alt = html.escape(match["alt"], quote=True)
    src = f"/figures/{match['name']}.svg"
    return (
        f'\n\n<figure class="chart"><img src="{src}" alt="{alt}" loading="lazy">'
        f"<figcaption>{alt}</figcaption></figure>\n\n"
    )


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> str:
    """Return sanitised HTML for `text`; scripts, handlers and js: URLs are dropped.

    `![caption](figure:name)` becomes a captioned image of the generated
    figure served at /figures/name.svg. Memoised on the text: rendering with
    Pygments costs milliseconds per lesson, and the same course text is served
    to every learner (an edit is new text, so nothing goes stale).
    """
    text = FIGURE_REF.sub(_figure_block, text or "")
    rendered = md.markdown(
        text, extensions=_EXTENSIONS, extension_configs=_EXTENSION_CONFIGS
    )
    cleaned = nh3.clean(
        rendered,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )
    return _SCROLLABLE.sub(r'<\1 tabindex="0"', cleaned)


# Inline Markdown for one-line fields shown inside headings, links and table
# cells: no blocks and no links (a title is often inside a link already).
_INLINE_TAGS = {
    "abbr",
    "b",
    "br",
    "code",
    "del",
    "em",
    "i",
    "kbd",
    "strong",
    "sub",
    "sup",
}


_NUMBERED = re.compile(r"^(\s*\d+)([.)]\s)", re.MULTILINE)


@lru_cache(maxsize=4096)
def render_markdown_inline(text: str) -> str:
    """Sanitised inline HTML for a title, question, takeaway or prompt line.

    The same Markdown as render_markdown (`code`, **bold**, *em*), without the
    wrapping <p>, so it fits inside <h1>, <a> or <td>; block tags are dropped
    and their text kept.
    """
    # A numbered title is not a list: "1. The head" keeps its number.
    line = _NUMBERED.sub(lambda m: m.group(1) + "\\" + m.group(2), text or "")
    rendered = md.markdown(line)
    return nh3.clean(rendered, tags=_INLINE_TAGS, attributes={}).strip()


def render_markdown_plain(text: str) -> str:
    """The text of a Markdown line without its markup, for places that take
    no HTML (chart labels, title attributes): `wte` and **bytes** read as
    wte and bytes, not with their backticks and asterisks."""
    return html.unescape(nh3.clean(render_markdown_inline(text), tags=set()))
