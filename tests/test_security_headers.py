"""Security headers: the CSP on every page, HSTS and HTTPS in production.

Templates must not need 'unsafe-inline' scripts: a scan of every template
fails on an inline <script> block or an on...= handler.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys

import pytest
from django.urls import reverse

from tests.conftest import PROJECT_ROOT

pytestmark = pytest.mark.django_db


def policy(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return {
        part.split()[0]: " ".join(part.split()[1:])
        for part in header.split(";")
        if part.strip()
    }


@pytest.mark.parametrize(
    "url",
    ["/", "/accounts/login/", "/accounts/signup/", "/admin/login/", "/api/v1/docs/"],
)
def test_html_pages_carry_a_csp_without_inline_script(client, url):
    response = client.get(url)
    assert response.status_code == 200
    rules = policy(response)
    assert rules["default-src"] == "'self'"
    assert "'unsafe-inline'" not in rules["script-src"]
    assert "'unsafe-eval'" not in rules["script-src"]
    assert rules["frame-ancestors"] == "'none'"
    assert rules["object-src"] == "'none'"


def test_signed_in_pages_carry_the_csp(client, learner, block_exercise):
    client.force_login(learner)
    for url in ["/progress/", "/review/", "/exercises/block-param-count/"]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert policy(response)["script-src"] == "'self'", url


def test_the_api_docs_script_is_a_file_not_inline(client):
    html = client.get("/api/v1/docs/").content.decode()
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts and all(
        "src=" in attrs and not body.strip() for attrs, body in scripts
    )
    init = client.get("/api/v1/docs/?script=")
    assert init.status_code == 200
    assert "SwaggerUIBundle" in init.content.decode()
    assert "/api/v1/schema/" in init.content.decode()


def test_a_figure_keeps_its_own_stricter_policy(client):
    from quiz.models import Figure

    Figure.objects.create(
        name="demo", source_hash="x", svg="<svg xmlns='http://www.w3.org/2000/svg'/>"
    )
    response = client.get("/figures/demo.svg")
    assert response["Content-Security-Policy"].startswith("default-src 'none'")


TEMPLATE_DIRS = [
    PROJECT_ROOT / "templates",
    PROJECT_ROOT / "quiz" / "templates",
    PROJECT_ROOT / "grader" / "templates",
    PROJECT_ROOT / "teaching" / "templates",
]
INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>")
HANDLER = re.compile(r"<[a-zA-Z][^>]*\son[a-z]+\s*=", re.S)


def test_no_template_has_inline_script_or_event_handlers():
    templates = [p for d in TEMPLATE_DIRS for p in d.rglob("*.html")]
    assert len(templates) > 10
    offenders = []
    for path in templates:
        text = path.read_text(encoding="utf-8")
        if INLINE_SCRIPT.search(text) or HANDLER.search(text):
            offenders.append(str(path.relative_to(PROJECT_ROOT)))
        if "javascript:" in text:
            offenders.append(f"{path.relative_to(PROJECT_ROOT)} (javascript: URL)")
    assert offenders == []


def test_the_template_scan_catches_what_it_must():
    assert INLINE_SCRIPT.search("<script>alert(1)</script>")
    assert INLINE_SCRIPT.search('<script type="module">x()</script>')
    assert not INLINE_SCRIPT.search('<script src="/static/js/x.js" defer></script>')
    assert not INLINE_SCRIPT.search('<script id="d" type="application/json">')
    assert HANDLER.search('<button type="button" onclick="go()">')
    assert not HANDLER.search('<button data-action="go">')


def production_env(**extra: str) -> dict:
    from django.db import connection

    env = {
        **os.environ,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/"
        + connection.settings_dict["NAME"],
        "DEBUG": "0",
        "SECURE_COOKIES": "1",
        "SECRET_KEY": secrets.token_urlsafe(64),
        "ALLOWED_HOSTS": "course.example.org,testserver",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    env.update(extra)
    return env


@pytest.mark.slow
def test_check_deploy_is_clean_in_a_production_configuration():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=PROJECT_ROOT,
        env=production_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


PROBE = """
import django, json
django.setup()
from django.test import Client
c = Client()
plain = c.get("/")
proxied = c.get("/", headers={"X-Forwarded-Proto": "https"})
health = c.get("/healthz")
print(json.dumps({
    "plain": [plain.status_code, plain.get("Location", "")],
    "proxied": [proxied.status_code, proxied.get("Strict-Transport-Security", "")],
    "health": health.status_code,
}))
"""


@pytest.mark.slow
def test_production_redirects_to_https_and_sends_hsts_but_not_for_healthz():
    import json

    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT_ROOT,
        env={**production_env(), "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["plain"] == [301, "https://testserver/"]
    status, hsts = seen["proxied"]
    assert status == 200
    assert "max-age=31536000" in hsts and "includeSubDomains" in hsts
    assert seen["health"] == 200


def test_plain_http_in_tests_and_development_is_not_redirected(client):
    # TEST_ENV has SECURE_COOKIES=0: no redirect, no HSTS.
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert "Strict-Transport-Security" not in response
