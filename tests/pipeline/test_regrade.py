"""Regrades through a real worker: a tightened tolerance changes a verdict and
keeps the old one; live grades go first while a long regrade runs."""

from __future__ import annotations

import pytest
from django.urls import reverse

from grader.models import Exercise, Regrade, Submission
from grader.services import submission_create
from teaching.assignments.gradebook import assignment_gradebook
from teaching.assignments.services import ItemSpec, assignment_create
from teaching.cohorts import cohort_create, cohort_join
from teaching.exercise_regrade import regrade_request
from tests.pipeline.conftest import load_exercises, wait_for

# One warm worker per shape for all (tests.pipeline.conftest.warm).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("warm-workers"),
]

# A thousandth off: within rtol 1e-2, far outside the harness's own 1e-4.
OFF_BY_A_LITTLE = "def lm_head_logits(x, weight):\n    return (x @ weight.T) * 1.001\n"
RIGHT = "def lm_head_logits(x, weight):\n    return x @ weight.T\n"
SLOW_BLOCK = (
    "import time\n"
    "def block_param_count(n_embd):\n"
    "    time.sleep(0.15)\n"
    "    return 12 * n_embd**2 + 13 * n_embd\n"
)
BLOCK = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


def graded(pk, timeout: float = 180) -> Submission:
    return wait_for(
        lambda: (row := Submission.objects.get(pk=pk)).status
        not in ("queued", "running")
        and row,
        timeout=timeout,
        what="a verdict",
    )


def finished(regrade: Regrade, timeout: float = 240) -> Regrade:
    return wait_for(
        lambda: (row := Regrade.objects.get(pk=regrade.pk)).status == "done" and row,
        timeout=timeout,
        what="the regrade",
    )


@pytest.fixture
def course(warm, make_user):
    teacher = make_user("ian", "instructor")
    cohort = cohort_create(owner=teacher, name="Spring")
    learners = [make_user(name) for name in ("lea", "leo")]
    for learner in learners:
        cohort_join(cohort=cohort, user=learner)
    return warm, teacher, cohort, learners


def test_a_tightened_tolerance_regrade_changes_a_verdict_and_keeps_the_old(
    course, client
):
    warm, teacher, cohort, (lea, leo) = course
    load_exercises("lm-head-logits")
    exercise = Exercise.objects.get(slug="lm-head-logits")
    exercise.options = {"rtol": 1e-2, "atol": 1e-2}
    exercise.save()
    warm.ready(slots=2)
    off = graded(
        submission_create(user=lea, exercise=exercise, code=OFF_BY_A_LITTLE).pk
    )
    right = graded(submission_create(user=leo, exercise=exercise, code=RIGHT).pk)
    assert (off.status, right.status) == ("passed", "passed")
    assignment = assignment_create(
        cohort=cohort, actor=teacher, title="Logits", opens_at=off.created_at,
        due_at=off.created_at.replace(year=off.created_at.year + 1),
        items=[ItemSpec("exercise", "lm-head-logits")],
    )  # fmt: skip
    assert [s.score for s in assignment_gradebook(assignment)] == [1.0, 1.0]

    exercise.options = {}  # back to the harness's own rtol 1e-4, atol 1e-5
    exercise.save()
    regrade = finished(regrade_request(user=teacher, slug=exercise.slug,
                                       cohort_id=cohort.pk))  # fmt: skip
    assert (regrade.total, regrade.done, regrade.changed, regrade.errors) == (
        2,
        2,
        1,
        0,
    )
    [change] = regrade.results.filter(changed=True)
    assert change.submission_id == off.pk
    assert (change.old_status, change.new_status) == ("passed", "failed")
    assert all(c["passed"] for c in change.old_checks)  # the old verdict is kept
    assert not all(c["passed"] for c in change.new_checks)
    off.refresh_from_db()
    assert off.status == "failed" and off.score < 1.0
    assert regrade.results.get(submission=right).changed is False
    lea_score, leo_score = assignment_gradebook(assignment)
    assert lea_score.score == off.score and leo_score.score == 1.0
    client.force_login(lea)
    page = client.get(reverse("progress")).content.decode()
    assert "Regraded" in page and "passed (1.00) → <strong>failed</strong>" in page
    client.force_login(teacher)
    report = client.get(reverse("instructor-regrade", args=[regrade.pk])).content
    assert "pass→fail" in report.decode()


def test_a_learner_is_graded_while_a_long_regrade_runs(course):
    warm, teacher, cohort, (lea, leo) = course
    load_exercises("block-param-count")
    exercise = Exercise.objects.get(slug="block-param-count")
    exercise.options = {"time_budget_seconds": 10}
    exercise.save()
    old = [
        Submission.objects.create(
            user=leo,
            exercise=exercise,
            code=SLOW_BLOCK,
            seed=n,
            status="passed",
            score=1.0,
        )  # fmt: skip
        for n in range(12)
    ]
    warm.ready(slots=2)
    regrade = regrade_request(user=teacher, slug=exercise.slug, cohort_id=cohort.pk)
    assert regrade.total == len(old)
    wait_for(
        lambda: Regrade.objects.get(pk=regrade.pk).done >= 1,
        timeout=120,
        what="the regrade to start",
    )
    live = graded(submission_create(user=lea, exercise=exercise, code=BLOCK).pk)
    regrade = finished(regrade)
    assert live.status == "passed"
    # graded in the slot the regrade may never take, long before it ended
    assert live.finished_at < regrade.finished_at
    assert regrade.done == 12 and regrade.changed == 0
