"""Each scoring rule of docs/gradebook.md, with its edge cases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from grader.models import Submission
from quiz.models import Question, QuestionAttempt
from teaching.assignments.scoring import (
    assignment_scores,
    days_late,
    lateness_factor,
)
from teaching.assignments.services import (
    ItemSpec,
    assignment_create,
    extension_set,
    override_set,
)
from teaching.models import Assignment
from tests.quiz.cohort_fixtures import *  # noqa: F403

pytestmark = pytest.mark.django_db
DUE = timezone.now().replace(microsecond=0) - timedelta(days=10)
Policy = Assignment.LatePolicy


def make(world, course, *, policy=Policy.NONE, per_day=0.0, cap=1.0, items=None):
    return assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=DUE - timedelta(days=7),
        due_at=DUE,
        items=items or [ItemSpec("exercise", "ex-a")],
        late_policy=policy,
        penalty_per_day=per_day,
        penalty_cap=cap,
    )


def attempt(user, exercise, score, at, status=None) -> Submission:
    status = status or ("passed" if score == 1 else "failed")
    row = Submission.objects.create(
        user=user, exercise=exercise, code="x", seed=0, status=status, score=score
    )
    Submission.objects.filter(pk=row.pk).update(created_at=at)
    return row


def first_try(user, question, correct, at) -> None:
    row = QuestionAttempt.objects.create(
        user=user, question=question, answer="1", correct=correct
    )
    QuestionAttempt.objects.filter(pk=row.pk).update(created_at=at)


def score_of(assignment, user):
    [score] = assignment_scores(assignment, [(user.pk, user.username)])
    return score


def test_days_late_round_up_and_the_deadline_itself_is_on_time():
    assert days_late(DUE, DUE) == 0
    assert days_late(DUE + timedelta(seconds=1), DUE) == 1
    assert days_late(DUE + timedelta(days=1), DUE) == 1
    assert days_late(DUE + timedelta(days=1, seconds=1), DUE) == 2


def test_lateness_factors_for_each_policy(world, course):
    penalty = make(world, course, policy=Policy.PENALTY, per_day=0.1, cap=0.3)
    assert [lateness_factor(penalty, d) for d in (0, 1, 2, 3, 9)] == pytest.approx(
        [1.0, 0.9, 0.8, 0.7, 0.7]
    )
    none = make(world, course)
    assert lateness_factor(none, 30) == 1.0
    no_credit = make(world, course, policy=Policy.NO_CREDIT)
    assert lateness_factor(no_credit, 0) == 1.0
    assert lateness_factor(no_credit, 1) == 0.0


def test_an_attempt_submitted_exactly_at_the_deadline_counts_in_full(world, course):
    assignment = make(world, course, policy=Policy.NO_CREDIT)
    attempt(world.lea, course["exercises"]["ex-a"], 1.0, DUE)
    score = score_of(assignment, world.lea)
    assert score.score == 1.0 and not score.late
    assert score.items[0].why == "best attempt by the due date: 100%"


def test_one_second_late_is_a_day_of_penalty(world, course):
    assignment = make(world, course, policy=Policy.PENALTY, per_day=0.25)
    attempt(world.lea, course["exercises"]["ex-a"], 0.8, DUE + timedelta(seconds=1))
    [item] = score_of(assignment, world.lea).items
    assert item.score == pytest.approx(0.6) and item.late
    assert item.why == "best credit from an attempt 1 day late: 80% x 0.75"


def test_partial_credit_is_the_checks_score_and_the_best_attempt_counts(world, course):
    assignment = make(world, course)
    exercise = course["exercises"]["ex-a"]
    attempt(world.lea, exercise, 0.4, DUE - timedelta(hours=3))
    best = attempt(world.lea, exercise, 0.75, DUE - timedelta(hours=2))
    attempt(world.lea, exercise, 0.5, DUE - timedelta(hours=1))
    [item] = score_of(assignment, world.lea).items
    assert item.score == 0.75 and item.counted.submission_id == str(best.pk)


def test_a_resubmission_after_a_pass_never_lowers_the_score(world, course):
    assignment = make(world, course, policy=Policy.PENALTY, per_day=0.5)
    exercise = course["exercises"]["ex-a"]
    passed = attempt(world.lea, exercise, 1.0, DUE - timedelta(hours=1))
    attempt(world.lea, exercise, 0.0, DUE - timedelta(minutes=5))  # broke it again
    attempt(world.lea, exercise, 0.0, DUE + timedelta(days=1))  # and late
    [item] = score_of(assignment, world.lea).items
    assert item.score == 1.0 and not item.late
    assert item.counted.submission_id == str(passed.pk)


def test_a_late_attempt_counts_only_where_it_beats_the_on_time_best(world, course):
    assignment = make(world, course, policy=Policy.PENALTY, per_day=0.1, cap=0.5)
    exercise = course["exercises"]["ex-a"]
    attempt(world.lea, exercise, 0.5, DUE - timedelta(hours=1))
    attempt(world.leo, exercise, 0.5, DUE - timedelta(hours=1))
    attempt(world.lea, exercise, 1.0, DUE + timedelta(days=2))  # 0.8 after penalty
    attempt(world.leo, exercise, 0.55, DUE + timedelta(days=2))  # 0.44: worse
    assert score_of(assignment, world.lea).items[0].score == pytest.approx(0.8)
    assert score_of(assignment, world.lea).late
    leo = score_of(assignment, world.leo)
    assert leo.items[0].score == 0.5 and not leo.late


def test_nothing_but_graded_attempts_count(world, course):
    assignment = make(world, course)
    exercise = course["exercises"]["ex-a"]
    for status in ("queued", "running", "cancelled"):
        attempt(world.lea, exercise, None, DUE - timedelta(hours=1), status=status)
    [item] = score_of(assignment, world.lea).items
    assert item.score == 0.0 and not item.attempted
    assert item.why == "no graded attempt"


def test_an_extension_moves_the_deadline_for_that_learner_only(world, course):
    assignment = make(world, course, policy=Policy.NO_CREDIT)
    exercise = course["exercises"]["ex-a"]
    extension_set(
        assignment=assignment,
        actor=world.owner,
        learner=world.lea,
        due_at=DUE + timedelta(days=2),
    )
    for learner in (world.lea, world.leo):
        attempt(learner, exercise, 1.0, DUE + timedelta(days=2))  # exactly at it
    lea, leo = score_of(assignment, world.lea), score_of(assignment, world.leo)
    assert lea.extended and lea.due_at == DUE + timedelta(days=2)
    assert lea.score == 1.0 and not lea.late
    assert not leo.extended and leo.score == 0.0 and leo.late


def test_a_lesson_scores_its_self_checks_right_at_the_first_try(world, course):
    lesson = course["lessons"]["first-lesson"]
    questions = list(Question.objects.filter(lesson=lesson).order_by("order"))
    assert len(questions) == 3
    assignment = make(
        world,
        course,
        policy=Policy.PENALTY,
        per_day=0.5,
        items=[ItemSpec("lesson", "first-lesson")],
    )
    first_try(world.lea, questions[0], True, DUE - timedelta(hours=2))
    first_try(world.lea, questions[1], False, DUE - timedelta(hours=2))
    first_try(world.lea, questions[1], True, DUE - timedelta(hours=1))  # a retry
    first_try(world.lea, questions[2], True, DUE + timedelta(hours=1))  # late: x0.5
    [item] = score_of(assignment, world.lea).items
    assert item.score == pytest.approx((1 + 0 + 0.5) / 3)
    assert item.why == (
        "2 of 3 self-checks right at the first try; late first answers kept "
        "0.50 of their credit"
    )


def test_an_override_replaces_the_score_and_items_are_weighed(world, course):
    assignment = make(
        world,
        course,
        items=[ItemSpec("exercise", "ex-a", 3), ItemSpec("exercise", "ex-b", 1)],
    )
    attempt(world.lea, course["exercises"]["ex-a"], 1.0, DUE - timedelta(hours=1))
    score = score_of(assignment, world.lea)
    assert (score.points, score.possible, score.score) == (3.0, 4.0, 0.75)
    ex_b = assignment.items.get(exercise__slug="ex-b")
    override_set(
        assignment=assignment,
        actor=world.owner,
        learner=world.lea,
        item_id=ex_b.pk,
        score=0.5,
        reason="solved it on paper in the exam",
    )
    score = score_of(assignment, world.lea)
    assert (score.points, score.score) == (3.5, 0.875)
    assert score.items[1].why == ("set to 50% by ian: solved it on paper in the exam")


def test_editing_items_keeps_the_overrides_of_the_items_that_stay(world, course):
    from teaching.assignments.services import assignment_update
    from teaching.models import ScoreOverride

    assignment = make(
        world,
        course,
        items=[ItemSpec("exercise", "ex-a"), ItemSpec("exercise", "ex-b")],
    )
    ex_a = assignment.items.get(exercise__slug="ex-a")
    override_set(assignment=assignment, actor=world.owner, learner=world.lea,
                 item_id=ex_a.pk, score=0.9, reason="viva")  # fmt: skip
    assignment_update(
        assignment=assignment,
        actor=world.owner,
        items=[ItemSpec("exercise", "ex-a", 2), ItemSpec("exercise", "ex-c")],
    )
    kept = assignment.items.get(exercise__slug="ex-a")
    assert kept.pk == ex_a.pk and kept.weight == 2.0
    assert ScoreOverride.objects.get().item_id == ex_a.pk
    assert score_of(assignment, world.lea).points == pytest.approx(1.8)
