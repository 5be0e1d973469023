"""Static files (issue 19): compressed in the production setup, and the
467 KB editor bundle loaded only by the exercise page."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from django.core.management import call_command
from django.templatetags.static import static
from django.test import Client
from django.urls import reverse

from quiz.content.loader import content_load

ROOT = Path(__file__).resolve().parents[1]
EDITOR = ROOT / "static" / "vendor" / "editor.js"
PRODUCTION = "config.storage.CompressedManifestStorage"


@pytest.fixture
def collected(settings, tmp_path):
    """collectstatic into a fresh STATIC_ROOT with the production storage."""
    if not EDITOR.exists():
        pytest.skip("static/vendor/editor.js is not built (scripts/build_assets.sh)")
    settings.STATIC_ROOT = tmp_path / "staticfiles"
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": PRODUCTION}}
    # The project's own files only: the apps' (the admin's, the API docs'
    # 28 MB of bundles) are not this test's business.
    settings.STATICFILES_FINDERS = [
        "django.contrib.staticfiles.finders.FileSystemFinder"
    ]
    call_command("collectstatic", "--no-input", verbosity=0)
    return settings.STATIC_ROOT


def test_the_editor_bundle_is_served_gzipped_under_a_hashed_name(collected):
    url = static("vendor/editor.js")
    assert url != "/static/vendor/editor.js", "no content hash in the name"
    client = Client()  # a new handler: WhiteNoise indexes this STATIC_ROOT

    zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip, br")
    assert zipped.status_code == 200
    # gzip whatever the machine has installed: brotli is only in the test
    # tools (a load tester's dependency), never in the service's image.
    assert zipped["Content-Encoding"] == "gzip"
    assert not list(collected.rglob("*.br"))
    body = b"".join(zipped.streaming_content)
    assert len(body) < EDITOR.stat().st_size / 2
    assert gzip.decompress(body) == EDITOR.read_bytes()

    plain = client.get(url)  # a client that does not ask gets the plain file
    assert "Content-Encoding" not in plain
    assert b"".join(plain.streaming_content) == EDITOR.read_bytes()


def test_pages_render_before_collectstatic_with_the_production_storage(
    settings, tmp_path, client, db
):
    settings.STATIC_ROOT = tmp_path / "empty"
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {"BACKEND": PRODUCTION}}
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert 'href="/static/css/site.css"' in response.content.decode()


@pytest.mark.django_db
def test_only_the_exercise_page_loads_the_editor(
    client, learner, block_exercise, content_tree
):
    if not EDITOR.exists():
        pytest.skip("static/vendor/editor.js is not built (scripts/build_assets.sh)")
    content_load(root=content_tree.root)
    client.force_login(learner)
    exercise = client.get(reverse("exercise", args=[block_exercise.slug]))
    assert "vendor/editor.js" in exercise.content.decode()
    for url in (
        reverse("home"),
        reverse("lesson", args=["first-lesson"]),
        reverse("progress"),
        reverse("review"),
        reverse("cohort-join-form"),
    ):
        html = client.get(url).content.decode()
        assert "editor.js" not in html, url
        assert "editor.css" not in html, url
