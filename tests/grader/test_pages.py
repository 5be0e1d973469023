"""Exercise and submission pages (server side; the browser test covers the JS)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from grader.models import Submission

pytestmark = pytest.mark.django_db


@pytest.fixture
def exercise(block_exercise):
    return block_exercise


def test_the_exercise_page_shows_prompt_signature_and_starter(client, exercise):
    html = client.get(reverse("exercise", args=[exercise.slug])).content.decode()
    assert "<strong>parameters</strong> of one block" in html
    assert "block_param_count(n_embd) -&gt; int" in html
    assert "Log in</a> to submit code" in html
    assert '<pre class="starter"' in html  # read-only before signing in
    assert "def block_param_count(n_embd):" in html
    assert "12 * n_embd" not in html  # the solution stays hidden


def test_submitting_the_form_queues_a_submission_and_shows_it(
    client, learner, exercise
):
    client.force_login(learner)
    response = client.post(
        reverse("exercise", args=[exercise.slug]), {"code": "def f():\n    pass\n"}
    )
    submission = Submission.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("submission", args=[submission.pk])
    html = client.get(response["Location"]).content.decode()
    assert "queued" in html and "position 1 among your queued submissions" in html
    assert 'http-equiv="refresh"' in html  # the no-JS fallback while waiting
    assert f'data-url="/api/v1/submissions/{submission.pk}/"' in html


def test_a_finished_submission_shows_its_checks_and_stops_refreshing(
    client, learner, exercise
):
    submission = Submission.objects.create(
        user=learner,
        exercise=exercise,
        code="x",
        seed=1,
        status="failed",
        score=0.5,
        checks=[
            {"name": "d=768", "passed": True, "message": "ok"},
            {"name": "d=64", "passed": False, "message": "got <1>, expected 2"},
        ],
    )
    client.force_login(learner)
    html = client.get(reverse("submission", args=[submission.pk])).content.decode()
    assert "FAIL</strong> d=64" in html and "got &lt;1&gt;, expected 2" in html
    assert 'http-equiv="refresh"' not in html
    assert 'data-terminal="true"' in html


def test_oversized_code_is_refused_on_the_page_with_the_reason(
    client, learner, exercise, settings
):
    settings.SUBMISSION_MAX_BYTES = 10
    client.force_login(learner)
    response = client.post(
        reverse("exercise", args=[exercise.slug]), {"code": "x" * 50}
    )
    assert response.status_code == 200
    assert "the limit is 10 bytes" in response.content.decode()
    assert "x" * 50 in response.content.decode()  # the learner's code is kept
    assert not Submission.objects.exists()


def test_another_learners_submission_is_a_404(client, learner, make_user, exercise):
    submission = Submission.objects.create(
        user=learner, exercise=exercise, code="x", seed=1
    )
    client.force_login(make_user("eve"))
    assert client.get(reverse("submission", args=[submission.pk])).status_code == 404


def test_anonymous_posts_are_sent_to_log_in(client, exercise):
    response = client.post(reverse("exercise", args=[exercise.slug]), {"code": "x"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not Submission.objects.exists()
