"""In Debian's Chromium: the main pages run their JavaScript under the site's
Content-Security-Policy, and the browser reports no violation on any of them."""

from __future__ import annotations

import pytest

from quiz.content.loader import content_load
from teaching.cohorts import cohort_create, cohort_join

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def world(content_tree, make_user, block_exercise):
    content_load(root=content_tree.root)
    make_user("ada", "admin").__class__.objects.filter(username="ada").update(
        is_staff=True
    )
    teacher = make_user("ian", "instructor")
    learner = make_user("lea", "learner")
    cohort = cohort_create(owner=teacher, name="Spring")
    cohort_join(cohort=cohort, user=learner)
    return {"cohort": cohort}


def log_in(page, base: str, username: str) -> None:
    page.goto(base + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", "pw-Secret-123")
    page.click("main button[type=submit]")
    page.wait_for_url(base + "/")


def visit_all(page, base: str, paths: list[str]) -> list[str]:
    """Open each page and let its scripts run; return the CSP complaints."""
    complaints: list[str] = []

    def on_console(message):
        text = message.text
        if "Content Security Policy" in text or "Refused to" in text:
            complaints.append(f"{page.url}: {text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: complaints.append(f"{page.url}: {error}"))
    for path in paths:
        response = page.goto(base + path)
        assert response.ok, (path, response.status)
        page.wait_for_load_state("networkidle")
    return complaints


def test_no_page_reports_a_csp_violation(browser, live_server, world):
    base = live_server.url
    cohort = world["cohort"].pk
    context = browser.new_context()
    page = context.new_page()
    complaints = visit_all(page, base, ["/", "/accounts/login/", "/api/v1/docs/"])
    # The API docs (Swagger UI) drew the operations from the schema.
    page.goto(base + "/api/v1/docs/")
    page.wait_for_selector(".opblock", timeout=30_000)

    log_in(page, base, "lea")
    complaints += visit_all(
        page,
        base,
        [
            "/lessons/first-lesson/",
            "/progress/",
            "/review/",
            "/cohorts/join/",
            "/exercises/",
        ],
    )
    page.goto(base + "/exercises/block-param-count/")
    page.wait_for_selector(".cm-editor", timeout=30_000)  # CodeMirror mounted

    context = browser.new_context()
    page = context.new_page()
    log_in(page, base, "ian")
    complaints += visit_all(
        page,
        base,
        [
            "/instructor/",
            f"/instructor/cohorts/{cohort}/",
            f"/instructor/cohorts/{cohort}/analytics/",
            "/admin/login/",
        ],
    )
    from quiz.models import Lesson

    context = browser.new_context()
    page = context.new_page()
    log_in(page, base, "ada")
    lesson = Lesson.objects.get(slug="first-lesson").pk
    complaints += visit_all(
        page,
        base,
        ["/admin/", f"/admin/quiz/lesson/{lesson}/change/", "/admin/grader/exercise/"],
    )
    assert complaints == []
