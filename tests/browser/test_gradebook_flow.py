"""In Debian's Chromium: an instructor runs a course with assignments.

The instructor creates an assignment that was due yesterday (half credit a
day late) and one due next week, through the form; the learner submits to
both (graded by a real worker); the gradebook shows the late penalty; the
instructor overrides the late score with a reason; the CSV has the row.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from quiz.content.loader import content_load
from teaching.cohorts import cohort_create, cohort_join
from teaching.models import Assignment
from tests.conftest import PROJECT_ROOT, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # one warm worker (tests/conftest.py)
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
BLOCK = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
KV = (
    "def kv_cache_bytes(n_layer, n_embd, seq_len, batch_size, bytes_per_element):\n"
    "    return 2 * n_layer * batch_size * seq_len * n_embd * bytes_per_element\n"
)
TERMINAL = (
    "() => ['passed','failed','error']"
    ".includes(document.getElementById('status').textContent)"
)


@pytest.fixture
def worker_stack(warm):
    content_load(root=PROJECT_ROOT / "content")
    warm.ready(slots=2)
    return warm


PARIS = ZoneInfo("Europe/Paris")


def form_time(moment: datetime) -> str:
    """What an instructor in Paris types into a datetime-local field."""
    return moment.astimezone(PARIS).strftime("%Y-%m-%dT%H:%M")


def create_assignment(page, base, cohort_id, *, title, due, exercise):
    page.goto(f"{base}/instructor/cohorts/{cohort_id}/gradebook/")
    page.click("#new-assignment")
    page.fill("#title", title)
    page.fill("#opens_at", form_time(due - timedelta(days=7)))
    page.fill("#due_at", form_time(due))
    page.check('input[name=late_policy][value="penalty"]')
    page.fill("#penalty_per_day", "0.5")
    page.check(f'input[name=exercise][value="{exercise}"]')
    page.click("#assignment-form button[type=submit]")
    page.wait_for_url("**/instructor/assignments/*/")


def submit_and_wait(page, base, api, token, slug, code):
    created = api.post(
        f"{base}/api/v1/exercises/{slug}/submissions/",
        data={"code": code},
        headers={"Authorization": f"Token {token}"},
    )
    assert created.status == 202, created.text()
    page.goto(f"{base}/submissions/{created.json()['id']}/")
    page.wait_for_function(TERMINAL, timeout=180_000)
    assert page.text_content("#status") == "passed"


def test_an_instructor_grades_an_assignment_with_a_late_penalty_and_an_override(
    browser, worker_stack, live_server, make_user, settings
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    teacher_user = make_user("ian", "instructor")
    lea = make_user("lea", "learner")
    cohort = cohort_create(owner=teacher_user, name="Browser course")
    cohort_join(cohort=cohort, user=lea)
    base = live_server.url
    now = datetime.now(UTC).replace(second=0, microsecond=0)

    teacher = browser.new_context(timezone_id="Europe/Paris").new_page()
    sign_in(teacher, base, "ian")
    for title, due, exercise in (
        ("Last week", now - timedelta(hours=12), "block-param-count"),
        ("Next week", now + timedelta(days=7), "kv-cache-bytes"),
    ):
        create_assignment(
            teacher, base, cohort.pk, title=title, due=due, exercise=exercise
        )
    past = Assignment.objects.get(title="Last week")
    assert past.due_at == now - timedelta(hours=12)  # typed in Paris, stored UTC

    learner = browser.new_context().new_page()
    sign_in(learner, base, "lea")
    learner.goto(base + "/")
    assert "Last week" in learner.text_content("#my-assignments + ul")
    api = browser.new_context().request
    token = api.post(
        base + "/api/v1/auth/token/",
        data={"username": "lea", "password": "pw-Secret-123"},
    ).json()["token"]
    submit_and_wait(learner, base, api, token, "block-param-count", BLOCK)
    submit_and_wait(learner, base, api, token, "kv-cache-bytes", KV)
    learner.goto(base + "/exercises/block-param-count/")
    assert "Was due" in learner.text_content(".due-note")

    teacher.goto(f"{base}/instructor/cohorts/{cohort.pk}/gradebook/")
    shown = teacher.text_content(".assignments time")  # in the viewer's zone
    assert "GMT+1" in shown or "CET" in shown, shown
    row = teacher.locator("#gradebook tbody tr", has_text="lea")
    cells = row.locator("td.score")
    assert cells.nth(0).text_content().startswith("50%")  # a day late, half
    assert "late" in cells.nth(0).text_content()
    assert cells.nth(1).text_content().strip() == "100%"
    teacher.screenshot(path=str(ARTIFACTS / "gradebook.png"), full_page=True)

    cells.nth(0).locator("a").click()  # the drill-down: which attempt, and why
    teacher.wait_for_selector("#drilldown")
    assert "best credit from an attempt 1 day late" in teacher.text_content(
        "#drilldown"
    )
    teacher.fill("#ov-score", "1")
    teacher.fill("#ov-reason", "the deadline moved for everyone on paper")
    teacher.click(".override-form button[type=submit]")
    teacher.wait_for_selector("text=Score overridden")
    assert "set to 100% by ian" in teacher.text_content("#drilldown")
    teacher.screenshot(path=str(ARTIFACTS / "gradebook-override.png"), full_page=True)

    download = teacher.request.get(
        f"{base}/instructor/cohorts/{cohort.pk}/gradebook-plain.csv"
    )
    lines = download.text().splitlines()
    assert lines[0] == "learner,Last week %,Next week %,points,possible,total %"
    assert lines[1] == "lea,100.0,100.0,2.0,2.0,100.0"
