"""Regrades without a worker: what is queued, who may ask, live work first."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from grader import dispatch, regrade_grading
from grader.lanes import LIGHT, Lanes
from grader.models import Regrade, RegradeResult, Submission
from grader.services import regrade_start
from tests.quiz.cohort_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db


def sub(user, exercise, status, score=None) -> Submission:
    return Submission.objects.create(
        user=user, exercise=exercise, code="x", seed=3, status=status, score=score
    )


def test_a_regrade_queues_each_graded_submission_with_its_old_verdict(world, course):
    exercise = course["exercises"]["ex-a"]
    graded = [
        sub(world.lea, exercise, "passed", 1.0),
        sub(world.leo, exercise, "failed", 0.5),
        sub(world.max, exercise, "error", 0.0),
    ]
    for status in ("queued", "running", "cancelled"):
        sub(world.lea, exercise, status)
    everyone = regrade_start(exercise=exercise, requested_by=world.superuser,
                             scope="everyone")  # fmt: skip
    assert everyone.total == 3 and everyone.status == "queued"
    olds = {
        r.submission_id: (r.old_status, r.old_score) for r in everyone.results.all()
    }
    assert olds == {s.pk: (s.status, s.score) for s in graded}
    cohort = regrade_start(
        exercise=exercise,
        requested_by=world.owner,
        scope="cohort",
        user_ids=[world.lea.pk, world.leo.pk],
    )
    assert cohort.total == 2
    nothing = regrade_start(
        exercise=course["exercises"]["ex-c"], requested_by=world.owner, scope="x"
    )
    assert (nothing.total, nothing.status) == (0, "done")


def test_background_work_never_takes_the_last_slot():
    lanes = Lanes(slots=2, heavy=1)
    first = lanes.take(LIGHT, background=True)
    assert first is not None
    assert lanes.take(LIGHT, background=True) is None  # the last one stays free
    assert lanes.take(LIGHT) is not None  # for a learner's submission
    first.release()
    single = Lanes(slots=1, heavy=1)
    assert single.take(LIGHT, background=True) is not None  # one slot: when idle


def test_a_waiting_submission_is_claimed_before_any_regrade(world, course):
    exercise = course["exercises"]["ex-a"]
    sub(world.leo, exercise, "failed", 0.0)
    regrade_start(exercise=exercise, requested_by=world.owner, scope="x")
    live = sub(world.lea, exercise, "queued")
    Submission.objects.filter(pk=live.pk).update(enqueued_at=live.created_at)
    claimed = dispatch._claim_next(Lanes(slots=2, heavy=1))
    assert claimed is not None and claimed[0].pk == live.pk
    assert RegradeResult.objects.get().status == "pending"  # untouched


def test_a_finished_result_counts_and_the_last_one_ends_the_regrade(world, course):
    exercise = course["exercises"]["ex-a"]
    sub(world.lea, exercise, "passed", 1.0)
    regrade = regrade_start(exercise=exercise, requested_by=world.owner, scope="x")
    result = regrade_grading.regrade_claim_next()
    assert result.status == "running"
    assert Regrade.objects.get().status == "running"
    regrade_grading._finish(
        result, "done", changed=True, new_status="failed", new_score=0.0
    )
    regrade.refresh_from_db()
    assert (regrade.done, regrade.changed, regrade.status) == (1, 1, "done")
    assert regrade.finished_at is not None
    assert regrade_grading.regrade_claim_next() is None


@pytest.mark.django_db(transaction=True)
def test_a_claim_cut_off_by_the_database_leaves_the_result_pending(
    world, course, monkeypatch
):
    from django.db import OperationalError
    from django.db.models.query import QuerySet

    exercise = course["exercises"]["ex-a"]
    sub(world.lea, exercise, "passed", 1.0)
    regrade_start(exercise=exercise, requested_by=world.owner, scope="x")
    get = QuerySet.get

    def down(self, *args, **kwargs):
        raise OperationalError("the database is restarting")

    monkeypatch.setattr(QuerySet, "get", down)
    with pytest.raises(OperationalError):
        regrade_grading.regrade_claim_next()
    monkeypatch.setattr(QuerySet, "get", get)
    assert RegradeResult.objects.get().status == "pending"  # not running, unowned
    assert Regrade.objects.get().status == "queued"
    # The retry takes it.
    assert regrade_grading.regrade_claim_next().status == "running"


def api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_who_may_start_and_follow_a_regrade(world, course):
    sub(world.lea, course["exercises"]["ex-a"], "passed", 1.0)
    path = "/api/v1/exercises/ex-a/regrade/"
    started = api(world.owner).post(path, {"cohort": world.cohort.pk}, format="json")
    assert started.status_code == 202
    url = started.json()["url"]
    assert started.json()["id"] == Regrade.objects.get().pk
    assert api(world.owner).post(path, {}, format="json").status_code == 403
    others = api(world.other).post(path, {"cohort": world.cohort.pk}, format="json")
    assert others.status_code == 404
    missing = api(world.owner).post(
        "/api/v1/exercises/nope/regrade/", {"cohort": world.cohort.pk}, format="json"
    )
    assert missing.status_code == 404
    assert api(world.lea).post(path, {}, format="json").status_code == 403
    everyone = api(world.superuser).post(path, {}, format="json")
    assert everyone.status_code == 202
    detail = api(world.owner).get(url).json()
    assert detail["scope"] == "cohort Spring 2026" and detail["total"] == 1
    assert detail["status"] == "queued" and detail["changes"] == []
    assert api(world.other).get(url).status_code == 404
    assert api(world.superuser).get(url).status_code == 200
    page = APIClient()
    page.force_login(world.owner)
    html = page.get(f"/instructor/regrades/{detail['id']}/").content.decode()
    assert 'id="regrade-progress" value="0" max="1"' in html
