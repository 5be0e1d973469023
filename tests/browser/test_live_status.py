"""In Debian's Chromium: submit a wrong then a right tie-weights answer and watch
each verdict appear on the page without a reload, graded by a real worker."""

from __future__ import annotations

import os

import pytest

from quiz.content.loader import content_load
from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import Stack

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ARTIFACTS = PROJECT_ROOT / "artifacts" / "screenshots"
WRONG = (
    "import torch\n\n"
    "def tie_weights(model):\n"
    "    copy = model.transformer.wte.weight.detach().clone()\n"
    "    model.lm_head.weight = torch.nn.Parameter(copy)\n"
)
RIGHT = (
    "def tie_weights(model):\n    model.lm_head.weight = model.transformer.wte.weight\n"
)


@pytest.fixture
def browser_page(browser):
    return browser.new_page()


@pytest.fixture
def worker_stack(transactional_db, settings):
    from django.db import connection

    content_load(root=PROJECT_ROOT / "content")
    name = connection.settings_dict["NAME"]
    stack = Stack(
        database_url=f"postgres://postgres@127.0.0.1:5432/{name}",
        redis_url=os.environ["REDIS_URL"],
    )
    settings.CELERY_TASK_DEFAULT_QUEUE = stack.queue
    stack.start_worker()
    yield stack
    stack.stop_workers()


def submit_and_watch(page, code: str, expected: str) -> None:
    page.fill("#code", code)
    page.click(".code-form button[type=submit]")
    page.wait_for_url("**/submissions/**")
    page.evaluate("window.__samePage = true")  # lost if the page reloads
    page.wait_for_function(
        "() => ['passed','failed','error']"
        ".includes(document.getElementById('status').textContent)",
        timeout=180_000,
    )
    assert page.text_content("#status") == expected
    assert page.evaluate("window.__samePage === true"), "the page reloaded"


def test_verdicts_appear_live_without_reloading(
    browser_page, worker_stack, live_server, make_user
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    make_user("lea")
    page = browser_page
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "lea")
    page.fill("#id_password", "pw-Secret-123")
    page.click("main button[type=submit]")
    page.wait_for_url(live_server.url + "/")
    page.goto(live_server.url + "/exercises/tie-weights/")
    page.screenshot(path=str(ARTIFACTS / "exercise.png"), full_page=True)

    submit_and_watch(page, WRONG, "failed")
    assert "copied wte instead of sharing it" in page.text_content("#checks")
    page.screenshot(path=str(ARTIFACTS / "submission-failed.png"), full_page=True)

    page.goto(live_server.url + "/exercises/tie-weights/")
    submit_and_watch(page, RIGHT, "passed")
    assert "FAIL" not in page.text_content("#checks")
    page.screenshot(path=str(ARTIFACTS / "submission-passed.png"), full_page=True)
