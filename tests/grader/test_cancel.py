"""Cancelling a submission: the API, the HTML form, and what may not be cancelled."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from grader import events
from grader.models import Submission
from grader.selectors import solution_access

pytestmark = pytest.mark.django_db


def row(user, exercise, status="queued") -> Submission:
    return Submission.objects.create(
        user=user, exercise=exercise, code="x", seed=1, status=status
    )


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def cancel(client, submission):
    return client.post(reverse("api-submission-cancel", args=[submission.pk]))


def test_a_queued_submission_is_cancelled_and_its_learners_next_may_go(
    learner, block_exercise
):
    first = row(learner, block_exercise)
    second = row(learner, block_exercise)
    response = cancel(api_for(learner), first)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "cancelled" and body["score"] is None
    first.refresh_from_db()
    assert first.status == "cancelled" and first.finished_at is not None
    # the learner's line moved on: the second one is its head now
    from grader.dispatch import claimable

    assert [s.pk for s in claimable(lanes=["light", "heavy"])] == [second.pk]


def test_a_running_submission_is_cancelled_and_every_worker_is_told(
    learner, block_exercise
):
    running = row(learner, block_exercise, "running")
    listener = events.subscriber(events.cancel_channel())
    try:
        assert cancel(api_for(learner), running).status_code == 200
        message = listener.get_message(timeout=5)
    finally:
        listener.close()
    assert message["data"].decode() == str(running.pk)
    running.refresh_from_db()
    assert running.status == "cancelled"
    # its slot is free at once: the learner may have a grade running again
    other = row(learner, block_exercise)
    Submission.objects.filter(pk=other.pk).update(status="running")


@pytest.mark.parametrize("status", ["passed", "failed", "error"])
def test_a_finished_submission_is_not_cancelled(learner, block_exercise, status):
    done = row(learner, block_exercise, status)
    response = cancel(api_for(learner), done)
    assert response.status_code == 409
    assert response.json() == {
        "detail": f"Not cancelled: its grade already finished ({status}).",
        "status": status,
    }
    done.refresh_from_db()
    assert done.status == status


def test_cancelling_twice_says_it_already_was(learner, block_exercise):
    queued = row(learner, block_exercise)
    client = api_for(learner)
    assert cancel(client, queued).status_code == 200
    again = cancel(client, queued)
    assert again.status_code == 409
    assert again.json()["detail"] == "Not cancelled: it was already cancelled."


def test_only_its_learner_can_cancel_it(learner, block_exercise, make_user, instructor):
    queued = row(learner, block_exercise)
    other = make_user("olga")
    for user in (other, instructor):
        response = cancel(api_for(user), queued)
        assert response.status_code == 404
        assert response.json() == {"detail": "No such submission."}
    assert APIClient().post(
        reverse("api-submission-cancel", args=[queued.pk])
    ).status_code in (401, 403)
    queued.refresh_from_db()
    assert queued.status == "queued"


def test_the_cancel_endpoint_is_post_only(learner, block_exercise):
    queued = row(learner, block_exercise)
    response = api_for(learner).get(reverse("api-submission-cancel", args=[queued.pk]))
    assert response.status_code == 405


def test_the_page_cancels_without_javascript(client, learner, block_exercise):
    queued = row(learner, block_exercise)
    client.force_login(learner)
    page = client.get(reverse("submission", args=[queued.pk]))
    assert b'id="cancel-form"' in page.content
    response = client.post(reverse("submission-cancel", args=[queued.pk]), follow=True)
    assert response.status_code == 200
    text = response.content.decode()
    assert "Cancelled." in text and "does not count as an attempt" in text
    assert 'id="cancelled-note"' in text and 'id="cancel-form"' not in text
    again = client.post(reverse("submission-cancel", args=[queued.pk]), follow=True)
    assert "Not cancelled: it was already cancelled." in again.content.decode()


def test_the_page_offers_cancel_only_to_its_learner_while_it_waits(
    client, learner, instructor, block_exercise
):
    from teaching.cohorts import cohort_create, cohort_join

    cohort = cohort_create(owner=instructor, name="C")
    cohort_join(cohort=cohort, user=learner)
    queued = row(learner, block_exercise)
    client.force_login(instructor)
    page = client.get(reverse("submission", args=[queued.pk]))
    assert page.status_code == 200 and b'id="cancel-form"' not in page.content
    done = row(learner, block_exercise, "passed")
    client.force_login(learner)
    page = client.get(reverse("submission", args=[done.pk]))
    assert b'id="cancel-form"' not in page.content
    post = client.post(reverse("submission-cancel", args=[done.pk]))
    assert post.status_code == 302  # back to the page, which says why


def test_a_cancelled_submission_is_not_a_graded_attempt(learner, block_exercise):
    for _ in range(5):
        row(learner, block_exercise, "cancelled")
    access = solution_access(user=learner, exercise=block_exercise)
    assert access.graded == 0 and not access.shown


def test_the_exercise_page_shows_the_latest_graded_result_not_a_cancel(
    client, learner, block_exercise
):
    graded = row(learner, block_exercise, "failed")
    Submission.objects.filter(pk=graded.pk).update(
        checks=[{"name": "count", "passed": False, "message": "off by 13"}]
    )
    row(learner, block_exercise, "cancelled")  # newer
    client.force_login(learner)
    page = client.get(reverse("exercise", args=[block_exercise.slug])).content
    text = page.decode()
    assert 'Latest result: <span class="status-failed">failed</span>' in text
    assert "off by 13" in text
    assert text.count('class="status-cancelled"') == 1  # in the attempts table


def test_the_page_says_a_submission_waits_behind_the_learners_own(
    client, learner, block_exercise
):
    row(learner, block_exercise, "running")
    waiting = row(learner, block_exercise)
    client.force_login(learner)
    page = client.get(reverse("submission", args=[waiting.pk])).content.decode()
    assert "waiting for your earlier submission" in page
