"""In Debian's Chromium with a real worker: an admin breaks a live exercise's
reference solution and saves; the page says one thing, shows the background
verification until it fails, and learners keep the live version; a fixed
save goes live."""

from __future__ import annotations

import pytest

from grader.models import Exercise
from tests.browser.test_instructor_flow import (
    ARTIFACTS,
    PASSWORD,
    RIGHT,
    worker_stack,  # noqa: F401
)
from tests.conftest import sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # one warm worker (tests/conftest.py)
]

BROKEN = "def tie_weights(model):\n    pass  # forgot to tie\n"
FIXED = RIGHT + "# fixed\n"
STATUS = ".exercise-versions"


def test_a_broken_save_keeps_the_live_version_and_a_fixed_one_replaces_it(
    browser,
    worker_stack,  # noqa: F811
    live_server,
    make_user,
    settings,
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    make_user("ada", "admin", password=PASSWORD)
    make_user("lea", "learner", password=PASSWORD)
    tie = Exercise.objects.select_related("lesson").get(slug="tie-weights")
    live_solution = tie.solution
    base = live_server.url
    change_url = f"{base}/admin/grader/exercise/{tie.pk}/change/"

    admin = browser.new_context().new_page()
    sign_in(admin, base, "ada")
    admin.goto(change_url)
    admin.fill("#id_solution", BROKEN)
    admin.click("input[name=_save]")
    admin.wait_for_url(change_url)  # stays where the progress is
    messages = admin.locator("ul.messagelist li").all_text_contents()
    assert len(messages) == 1, messages
    assert "Learners keep version 1 until it passes" in messages[0]
    admin.screenshot(path=str(ARTIFACTS / "admin-exercise-verifying.png"))
    # The page follows the worker without a reload (exercise_versions.js).
    admin.wait_for_selector(
        f'{STATUS} .version-draft[data-status="failed"]', timeout=180_000
    )
    assert "did not verify, so learners keep version 1" in admin.text_content(STATUS)
    # Still theirs to fix (the form strips the trailing newline).
    assert admin.input_value("#id_solution") == BROKEN.strip()
    admin.screenshot(path=str(ARTIFACTS / "admin-exercise-failed.png"), full_page=True)

    tie.refresh_from_db()
    assert (tie.solution, tie.version, tie.published) == (live_solution, 1, True)
    learner = browser.new_context().new_page()
    sign_in(learner, base, "lea")
    opened = learner.goto(f"{base}/exercises/tie-weights/")
    assert opened.status == 200
    learner.goto(f"{base}/lessons/{tie.lesson.slug}/")
    assert learner.locator('a[href="/exercises/tie-weights/"]').count() == 1

    admin.reload()
    admin.fill("#id_solution", FIXED)
    admin.click("input[name=_save]")
    admin.wait_for_url(change_url)
    admin.wait_for_function(
        "() => document.querySelector('.exercise-versions')"
        ".textContent.includes('Live: version 3 (published).')",
        timeout=180_000,
    )
    admin.screenshot(path=str(ARTIFACTS / "admin-exercise-live.png"))
    tie.refresh_from_db()
    assert (tie.solution, tie.version, tie.published) == (FIXED.strip(), 3, True)
