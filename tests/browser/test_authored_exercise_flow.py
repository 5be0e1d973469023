"""In Debian's Chromium with a real worker: an admin authors a new exercise
in the admin (harness `authored`: a declaration, no engine code), saves a
broken reference first and sees the case that fails, fixes it and it goes
live; a learner then fails it (the mistake named) and passes it in the
real editor."""

from __future__ import annotations

import json

import pytest

from grader.models import Exercise
from quiz.content.models import Diagnosis
from tests.browser.test_exercise_flow import wait_for_verdict
from tests.browser.test_instructor_flow import (
    ARTIFACTS,
    PASSWORD,
    worker_stack,  # noqa: F401
)
from tests.conftest import sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),  # one warm worker (tests/conftest.py)
]

SLUG = "top-k-logits"
STATUS = ".exercise-versions"
SOLUTION = """\
import torch


def top_k(logits, k):
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
"""
# Raises once the vocabulary is wider than 8: the second visible case.
BROKEN = SOLUTION.replace(
    "    kth =", "    assert logits.shape[-1] <= 8, 'too wide'\n    kth ="
)
ZEROS = SOLUTION.replace('float("-inf"))', "0.0)")
DECLARATION = {
    "inputs": [
        {"name": "logits", "tensor": ["b", "v"], "scale": 3.0},
        {"name": "k", "int": "k"},
    ],
    "cases": [
        {"name": "one row of 6, k=2", "sizes": {"b": 1, "k": 2, "v": 6}},
        {"name": "two rows of 12, k=3", "sizes": {"b": 2, "k": 3, "v": 12}},
        {
            "name": "hidden",
            "hidden": True,
            "sizes": {"b": {"between": [1, 3]}, "k": {"between": [1, 5]}, "v": 30},
        },
    ],
    "outputs": [{"name": "filtered", "exact": True, "axes": ["batch", "vocab"]}],
}


def test_an_admin_authors_an_exercise_and_a_learner_takes_it(
    browser,
    worker_stack,  # noqa: F811
    live_server,
    make_user,
):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    make_user("ada", "admin", password=PASSWORD)
    make_user("lea", "learner", password=PASSWORD)
    Diagnosis.objects.create(slug="top-k-fill-zero", summary="Filled with 0, not -inf.")
    base = live_server.url

    admin = browser.new_context().new_page()
    sign_in(admin, base, "ada")
    admin.goto(f"{base}/admin/grader/exercise/add/")
    for field, value in {
        "slug": SLUG,
        "title": "Top-k, authored in the browser",
        "harness": "authored",
        "entry_point": "top_k",
        "signature": "top_k(logits, k) -> Tensor",
        "prompt": "Keep the **k largest** logits of each row; the rest `-inf`.",
        "starter": "def top_k(logits, k):\n    ...\n",
        "solution": BROKEN,
        "declaration": json.dumps(DECLARATION, indent=2),
        "wrong_solutions": json.dumps(
            [{"name": "zeros", "diagnosis": "top-k-fill-zero", "code": ZEROS}]
        ),
        "right_solutions": "[]",
        "options": "{}",
    }.items():
        admin.fill(f"#id_{field}", value)
    admin.check("#id_published")
    admin.click("input[name=_save]")
    admin.wait_for_url("**/change/")
    change_url = admin.url
    admin.wait_for_selector(
        f'{STATUS} .version-draft[data-status="failed"]', timeout=180_000
    )
    # The author sees which case failed, and why.
    report = admin.text_content(STATUS)
    assert "two rows of 12, k=3" in report and "too wide" in report, report
    admin.screenshot(path=str(ARTIFACTS / "authored-failed.png"), full_page=True)
    exercise = Exercise.objects.get(slug=SLUG)
    assert (exercise.version, exercise.published) == (0, False)
    learner = browser.new_context().new_page()
    sign_in(learner, base, "lea")
    assert learner.goto(f"{base}/exercises/{SLUG}/").status == 404

    admin.fill("#id_solution", SOLUTION)
    admin.click("input[name=_save]")
    admin.wait_for_url(change_url)
    admin.wait_for_function(
        "() => document.querySelector('.exercise-versions')"
        ".textContent.includes('(published).')",
        timeout=180_000,
    )
    exercise.refresh_from_db()
    assert exercise.published and exercise.version > 0

    learner.goto(f"{base}/exercises/{SLUG}/")
    learner.wait_for_selector(".cm-editor .cm-content")
    learner.evaluate("code => window.courseEditor.setValue(code)", ZEROS)
    learner.click(".code-form button[type=submit]")
    assert wait_for_verdict(learner) == "failed"
    assert "Filled with 0, not -inf." in learner.text_content("#results")
    learner.screenshot(path=str(ARTIFACTS / "authored-learner-failed.png"))
    learner.goto(f"{base}/exercises/{SLUG}/")
    learner.wait_for_selector(".cm-editor .cm-content")
    learner.evaluate("code => window.courseEditor.setValue(code)", SOLUTION)
    learner.click(".code-form button[type=submit]")
    assert wait_for_verdict(learner) == "passed"
