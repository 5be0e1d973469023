"""In Debian's Chromium: an instructor creates a cohort, a learner joins it by
the link and passes tie-weights (graded by a real worker), and the
instructor's progress matrix shows the pass after a reload."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.models import Exercise
from quiz.content.loader import content_load
from tests.conftest import PROJECT_ROOT, ContentTreeBuilder, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # one warm worker (tests/conftest.py)
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
RIGHT = (
    "def tie_weights(model):\n    model.lm_head.weight = model.transformer.wte.weight\n"
)
PASSWORD = "pw-Secret-123"


def load_tie_weights_course(tmp_path: Path) -> None:
    """A one-lesson course holding the real tie-weights exercise.

    Built apart from content/ so that this test does not depend on every
    lesson being valid at the moment it runs.
    """
    tree = ContentTreeBuilder(tmp_path / "content")
    tree.section("output-head", 1, "The output head")
    tree.lesson("output-head", 1, "weight-tying-124m", exercises=["tie-weights"])
    tree.raw(
        "exercises/tie-weights.yaml",
        (PROJECT_ROOT / "content" / "exercises" / "tie-weights.yaml").read_text(),
    )
    content_load(root=tree.root)


@pytest.fixture
def worker_stack(warm, tmp_path):
    load_tie_weights_course(tmp_path)
    warm.ready(slots=2)
    return warm


def exercises_cell(page, learner: str, lesson: str) -> str:
    """The "passed/total" part of a matrix cell, e.g. "1/2"."""
    text = page.text_content(
        f'tr[data-learner="{learner}"] td[data-lesson="{lesson}"] .e'
    )
    return text.split()[0]


def test_an_instructor_sees_a_new_learners_pass_in_the_matrix(
    browser, worker_stack, live_server, make_user, settings
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    make_user("ian", "instructor", password=PASSWORD)
    make_user("lea", "learner", password=PASSWORD)
    tie = Exercise.objects.select_related("lesson").get(slug="tie-weights")
    lesson = tie.lesson.slug
    total = Exercise.objects.filter(lesson=tie.lesson, published=True).count()
    base = live_server.url

    teacher = browser.new_context().new_page()
    sign_in(teacher, base, "ian")
    teacher.goto(base + "/instructor/")
    teacher.fill("#cohort-name", "Browser cohort")
    teacher.click("#cohort-create button[type=submit]")
    teacher.wait_for_url("**/instructor/cohorts/*/")
    join_link = teacher.get_attribute("#join-link", "href")
    assert join_link.startswith(base + "/cohorts/join/")
    assert teacher.text_content("#no-members")
    teacher.screenshot(path=str(ARTIFACTS / "instructor-cohort-created.png"))

    learner = browser.new_context().new_page()  # a separate cookie jar
    sign_in(learner, base, "lea")
    learner.goto(join_link)
    assert "Browser cohort" in learner.text_content("h1")
    learner.click("#join-button")
    learner.wait_for_selector("#joined")
    learner.screenshot(path=str(ARTIFACTS / "learner-joined.png"))

    teacher.reload()
    assert exercises_cell(teacher, "lea", lesson) == f"0/{total}"

    # Submitted through the API from the learner's browser (the exercise page's
    # editor is covered by test_live_status), then watched on the page.
    api = browser.new_context().request  # no session cookie: token auth only
    token = api.post(
        base + "/api/v1/auth/token/", data={"username": "lea", "password": PASSWORD}
    ).json()["token"]
    created = api.post(
        base + "/api/v1/exercises/tie-weights/submissions/",
        data={"code": RIGHT},
        headers={"Authorization": f"Token {token}"},
    )
    assert created.status == 202, created.text()
    learner.goto(base + f"/submissions/{created.json()['id']}/")
    learner.wait_for_function(
        "() => ['passed','failed','error'].includes("
        "document.getElementById('status').textContent)",
        timeout=180_000,
    )
    assert learner.text_content("#status") == "passed"

    teacher.reload()
    assert exercises_cell(teacher, "lea", lesson) == f"1/{total}"
    assert teacher.text_content('tr[data-learner="lea"] td[data-total="exercises"]')
    teacher.screenshot(path=str(ARTIFACTS / "instructor-matrix.png"), full_page=True)

    teacher.click('tr[data-learner="lea"] th a')  # drill into the learner
    teacher.wait_for_selector("#submissions")
    assert "tie-weights" in teacher.text_content("#submissions")
    teacher.screenshot(path=str(ARTIFACTS / "instructor-learner.png"), full_page=True)

    teacher.go_back()
    teacher.click("text=Exercise and question analytics")
    row = 'tr[data-exercise="tie-weights"]'
    assert teacher.text_content(f'{row} td[data-col="attempts"]') == "1"
    assert teacher.text_content(f'{row} td[data-col="pass-rate"]').startswith("100%")
    # Chart.js (a local file, never a CDN) drew the pass-rate chart.
    teacher.wait_for_function(
        "() => window.Chart"
        " && Chart.getChart(document.getElementById('exercise-chart'))"
    )
    teacher.screenshot(path=str(ARTIFACTS / "instructor-analytics.png"), full_page=True)
