"""Rendered Markdown is highlighted and cannot carry script."""

from quiz.content.markdown import render_markdown


def test_code_blocks_are_highlighted():
    html = render_markdown("```python\nimport torch\n```")
    assert '<div class="highlight">' in html
    assert '<span class="kn">import</span>' in html


def test_tables_render():
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |")
    assert "<table>" in html and "<td>1</td>" in html


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
