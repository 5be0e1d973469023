"""Rendered Markdown is highlighted and cannot carry script."""

from quiz.content.markdown import (
    render_markdown,
    render_markdown_inline,
    render_markdown_plain,
)


def test_code_blocks_are_highlighted():
    html = render_markdown("```python\nimport torch\n```")
    assert '<div class="highlight">' in html
    assert '<span class="kn">import</span>' in html


def test_tables_render():
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |")
    assert '<table tabindex="0">' in html and "<td>1</td>" in html


def test_script_tags_are_removed():
    html = render_markdown("hello <script>alert('x')</script>")
    assert "<script" not in html and "hello" in html


def test_event_handlers_and_javascript_urls_are_removed():
    html = render_markdown(
        '<img src="x" onerror="alert(1)"> [click](javascript:alert(1)) '
        '<a href="https://example.org" onclick="steal()">ok</a>'
    )
    assert "onerror" not in html and "onclick" not in html
    assert "javascript:" not in html
    assert 'href="https://example.org"' in html
    assert 'rel="noopener noreferrer"' in html


def test_iframes_and_styles_are_removed():
    html = render_markdown('<iframe src="https://evil"></iframe><style>*{}</style>text')
    assert "<iframe" not in html and "<style" not in html and "text" in html


def test_rendering_is_memoised_per_text():
    text = "Memo test: `x` and **y**, unique 7f3a."
    hits = render_markdown.cache_info().hits
    first = render_markdown(text)
    assert render_markdown(text) is first
    assert render_markdown.cache_info().hits == hits + 1
    assert render_markdown(text + " changed") != first


def test_blocks_that_scroll_are_reachable_by_keyboard():
    # axe's scrollable-region-focusable: a code block or a wide table that
    # scrolls sideways needs a tab stop, or keyboard users cannot scroll it.
    html = render_markdown("```python\nx = 1\n```\n\n    indented\n")
    assert html.count('<pre tabindex="0">') == 2


def test_authors_cannot_set_tabindex_or_other_attributes_themselves():
    html = render_markdown(
        '<pre tabindex="5" onclick="x()">a</pre><p tabindex="3">b</p>'
    )
    assert 'tabindex="5"' not in html and 'tabindex="3"' not in html
    assert '<pre tabindex="0">' in html and "onclick" not in html


def test_inline_markdown_has_no_block_wrapper():
    html = render_markdown_inline("Why is `lm_head` **tied**?")
    assert html == "Why is <code>lm_head</code> <strong>tied</strong>?"


def test_inline_markdown_drops_blocks_links_and_script_but_keeps_text():
    html = render_markdown_inline(
        "# Title [link](https://example.org) <script>alert(1)</script>"
    )
    assert "<h1" not in html and "<a" not in html and "<script" not in html
    assert html.startswith("Title link")


def test_inline_markdown_keeps_a_titles_number():
    assert render_markdown_inline("1. The `head`") == "1. The <code>head</code>"
    assert render_markdown_plain("2) **Tied** heads") == "2) Tied heads"
