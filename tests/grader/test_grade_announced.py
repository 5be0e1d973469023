"""A saved verdict is announced (learner_scores_changed) once it commits, and
a receiver that raises is logged without losing the grade."""

from __future__ import annotations

import pytest

from grader import submission_grading
from grader.models import Submission
from tests.score_signal import receiving

pytestmark = pytest.mark.django_db

RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


@pytest.mark.slow
def test_a_receiver_that_raises_never_loses_the_grade(
    learner, block_exercise, settings, django_capture_on_commit_callbacks, caplog
):
    settings.GRADER_RUNNER = "cold"
    heard = []

    def broken(sender, **kwargs):
        raise RuntimeError("the LMS is down")

    def after(sender, *, user_ids, **kwargs):
        heard.append(user_ids)

    submission = Submission.objects.create(
        user=learner, exercise=block_exercise, code=RIGHT, seed=7, status="queued"
    )
    with receiving(broken, "test-broken"), receiving(after, "test-after"):
        with django_capture_on_commit_callbacks(execute=True):
            status = submission_grading.submission_grade(
                submission_id=str(submission.pk)
            )
    submission.refresh_from_db()
    assert status == submission.status == "passed"
    assert submission.score == 1.0 and submission.finished_at is not None
    assert heard == [[learner.pk]]
    # Logged once, by Django's send_robust (with the receiver and traceback).
    (record,) = [r for r in caplog.records if r.levelname == "ERROR"]
    assert record.name == "django.dispatch" and "broken" in record.getMessage()
    assert record.exc_info[0] is RuntimeError
