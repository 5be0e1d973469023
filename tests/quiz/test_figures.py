"""Generated figures: scripts render to SVG, load with the content, serve safely."""

from __future__ import annotations

import fcntl
import os
import threading
from html.parser import HTMLParser

import pytest

from quiz.content.figures import figure_names, figure_render, main, source_hash
from quiz.content.loader import content_load
from quiz.content.markdown import render_markdown
from quiz.content.tree import ContentError
from quiz.models import Figure
from tests.conftest import PROJECT_ROOT

BARS = """
CAPTION = "Two bars"


def draw(fig):
    ax = fig.add_subplot()
    ax.bar(["left", "right"], [{left}, 7])
    ax.set_title("total {{}}".format({left} + 7))
"""


# The suite's own cache (var/figures unless set), read before a test changes it.
SHARED_CACHE = os.environ.get("FIGURE_CACHE_DIR")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FIGURE_CACHE_DIR", str(tmp_path / "figure-cache"))


def with_figure(content_tree, left: int = 3):
    content_tree.raw("figures/bars.py", BARS.format(left=left))
    body = "## What you need to know\n\n![Two bars, left and right](figure:bars)\n"
    content_tree.lesson("basics", 1, "first-lesson", body=body)
    return content_tree


def test_references_are_found_once_each_in_order():
    text = "![a](figure:one) text ![b](figure:two-x)\n![again](figure:one) ![x](y.png)"
    assert figure_names(text) == ["one", "two-x"]


def test_a_script_renders_to_svg_with_its_numbers_as_text(content_tree):
    with_figure(content_tree, left=3)
    svg, caption, digest = figure_render(content_tree.root / "figures" / "bars.py")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "total 10" in svg  # text kept as text, so it is searchable
    assert caption == "Two bars" and len(digest) == 64


def test_rendering_is_deterministic_and_cached(content_tree, tmp_path):
    with_figure(content_tree)
    path = content_tree.root / "figures" / "bars.py"
    first = figure_render(path)
    assert list((tmp_path / "figure-cache").glob("*.svg"))
    assert figure_render(path) == first


@pytest.mark.django_db
def test_load_content_stores_referenced_figures_and_updates_them(content_tree):
    with_figure(content_tree, left=3)
    content_load(root=content_tree.root)
    figure = Figure.objects.get(name="bars")
    assert "total 10" in figure.svg and figure.caption == "Two bars"
    old_hash = figure.source_hash
    with_figure(content_tree, left=5)
    report = content_load(root=content_tree.root)
    figure.refresh_from_db()
    assert "total 12" in figure.svg and figure.source_hash != old_hash
    assert "figure bars" in report.updated


@pytest.mark.django_db
def test_load_content_can_leave_the_figures_out(content_tree, tmp_path):
    """`load_content --no-figures` (the learner client's test server): the
    lessons load, no figure is drawn or stored; a full load adds them."""
    from io import StringIO

    from django.core.management import call_command

    from quiz.models import Lesson

    with_figure(content_tree)
    out = StringIO()
    call_command("load_content", str(content_tree.root), "--no-figures", stdout=out)
    assert "Loaded" in out.getvalue()
    assert Lesson.objects.filter(slug="first-lesson").exists()
    assert not Figure.objects.exists()
    assert not list((tmp_path / "figure-cache").glob("*.svg"))  # never drawn
    report = content_load(root=content_tree.root)
    assert "figure bars" in report.created
    assert "total 10" in Figure.objects.get(name="bars").svg


@pytest.mark.django_db
def test_a_missing_script_is_named_with_the_lesson_line(content_tree):
    body = "## What you need to know\n\nText.\n\n![Gone](figure:nowhere)\n"
    path = content_tree.lesson("basics", 1, "first-lesson", body=body)
    with pytest.raises(ContentError) as info:
        content_load(root=content_tree.root)
    problem = info.value.problems[0]
    assert problem.path == path and "nowhere" in problem.reason
    assert path.read_text().splitlines()[problem.line - 1] == "![Gone](figure:nowhere)"
    assert not Figure.objects.exists()


@pytest.mark.django_db
def test_a_broken_script_refuses_the_load_and_writes_nothing(content_tree):
    with_figure(content_tree)
    content_tree.raw("figures/bars.py", "def draw(fig):\n    1 / 0\n")
    with pytest.raises(ContentError) as info:
        content_load(root=content_tree.root)
    assert "ZeroDivisionError" in str(info.value)
    assert not Figure.objects.exists()
    from quiz.models import Lesson

    assert not Lesson.objects.exists()


def test_markdown_turns_a_reference_into_a_captioned_image():
    html = render_markdown('Intro.\n\n![Bars <b>"x"</b>](figure:bars)\n\nAfter.')
    assert '<figure class="chart"><img src="/figures/bars.svg"' in html
    assert "<figcaption>Bars &lt;b&gt;" in html
    tags = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append(tag)

    Tags().feed(html)
    assert tags == ["p", "figure", "img", "figcaption", "p"]  # no <b> element


@pytest.mark.django_db
def test_the_view_serves_svg_with_a_strict_policy_and_etag(client):
    Figure.objects.create(name="bars", svg="<svg></svg>", source_hash="abc")
    response = client.get("/figures/bars.svg")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response["Content-Security-Policy"].startswith("default-src 'none'")
    assert response.content == b"<svg></svg>"
    again = client.get("/figures/bars.svg", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304
    assert client.get("/figures/other.svg").status_code == 404
    assert client.post("/figures/bars.svg").status_code == 405


def test_the_preview_command_writes_a_png(content_tree, tmp_path, capsys):
    with_figure(content_tree)
    out = tmp_path / "bars.png"
    assert main(["bars", "-o", str(out), "--content", str(content_tree.root)]) == 0
    assert out.read_bytes().startswith(b"\x89PNG")
    assert main(["missing", "--content", str(content_tree.root)]) == 1
    assert "error" in capsys.readouterr().out


def test_every_figure_script_in_content_renders(monkeypatch):
    """The real figures: each draws without error and says what it shows.

    Into the suite's shared cache, as production's loads share theirs: on a
    clean checkout each script is drawn once in the whole run, by whichever
    test or loader gets to it first, and a cached SVG is this script's own
    (the cache key hashes the script and the render settings).
    """
    if SHARED_CACHE is None:
        monkeypatch.delenv("FIGURE_CACHE_DIR")
    else:
        monkeypatch.setenv("FIGURE_CACHE_DIR", SHARED_CACHE)
    for path in sorted((PROJECT_ROOT / "content" / "figures").glob("*.py")):
        svg, caption, _ = figure_render(path)
        assert "<svg" in svg and caption, path.name


def test_a_figure_being_drawn_elsewhere_is_waited_for_not_drawn_again(
    content_tree, tmp_path
):
    """Two loads at once draw a figure once: the second waits on the first's
    lock and takes its SVG (here the first is this test, holding the lock)."""
    drawn = tmp_path / "drawn"
    script = BARS.format(left=3) + f"\nopen({str(drawn)!r}, 'a').write('x')\n"
    content_tree.raw("figures/bars.py", script)
    path = content_tree.root / "figures" / "bars.py"
    digest = source_hash(path)
    cache = tmp_path / "figure-cache"
    cache.mkdir()
    result = {}
    with open(cache / f"{digest}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        waiter = threading.Thread(target=lambda: result.update(r=figure_render(path)))
        waiter.start()
        waiter.join(timeout=0.5)
        assert waiter.is_alive(), "it drew instead of waiting for the lock"
        (cache / f"{digest}.caption").write_text("Drawn elsewhere")
        (cache / f"{digest}.svg").write_text("<svg>elsewhere</svg>")
        fcntl.flock(lock, fcntl.LOCK_UN)
    waiter.join(timeout=60)
    assert result["r"] == ("<svg>elsewhere</svg>", "Drawn elsewhere", digest)
    assert not drawn.exists()


THREADS = """
import torch

AT_IMPORT = torch.get_num_threads()
CAPTION = "Thread counts"


def draw(fig):
    fig.add_subplot().set_title(f"import {AT_IMPORT} draw {torch.get_num_threads()}")
    torch.set_num_threads(3)  # a script's own change stays inside the render
"""


def test_a_script_runs_on_one_thread_and_the_process_keeps_its_count(content_tree):
    import torch

    content_tree.raw("figures/threads.py", THREADS)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        svg, _, _ = figure_render(content_tree.root / "figures" / "threads.py")
        assert "import 1 draw 1" in svg
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
