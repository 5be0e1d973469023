"""A failed grade schedules the follow-ups of the lessons behind its mistakes."""

from __future__ import annotations

import pytest

from grader import failure_review, submission_grading
from grader.models import Submission
from quiz.content.loader import content_load
from quiz.models import Diagnosis, FollowUp, Lesson, ReviewCard

pytestmark = pytest.mark.django_db

FORGOT_ALL = "def block_param_count(n_embd):\n    return 12 * n_embd * n_embd\n"
RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"


@pytest.fixture
def lessons(content_tree):
    content_load(root=content_tree.root)
    return {lesson.slug: lesson for lesson in Lesson.objects.all()}


@pytest.fixture
def exercise(block_exercise, lessons):
    block_exercise.lesson = lessons["first-lesson"]
    block_exercise.save()
    return block_exercise


def failed(user, exercise, *diagnoses, passed_too=False) -> Submission:
    checks = [
        {"name": f"case {i}", "passed": False, "message": "wrong", "diagnosis": d}
        for i, d in enumerate(diagnoses)
    ]
    if passed_too:
        checks.append({"name": "ok", "passed": True, "message": "", "diagnosis": None})
    return Submission.objects.create(
        user=user, exercise=exercise, code="x", seed=1, status="failed", checks=checks
    )


def carded_lessons(user) -> set[str]:
    return set(
        ReviewCard.objects.filter(user=user, reason="exercise").values_list(
            "follow_up__lesson__slug", flat=True
        )
    )


def test_a_mapped_diagnosis_schedules_the_follow_ups_of_its_lessons(
    learner, exercise, lessons
):
    row = Diagnosis.objects.create(slug="copied-not-shared", summary="copied")
    row.lessons.set([lessons["second-lesson"], lessons["third-lesson"]])
    submission = failed(learner, exercise, "copied-not-shared")

    changed = failure_review.submission_review_schedule(submission=submission)

    expected = FollowUp.objects.filter(
        lesson__slug__in=["second-lesson", "third-lesson"]
    )
    assert changed == expected.count() > 0
    assert set(
        ReviewCard.objects.filter(user=learner).values_list("follow_up", flat=True)
    ) == set(expected.values_list("pk", flat=True))
    assert carded_lessons(learner) == {"second-lesson", "third-lesson"}


def test_an_unmapped_diagnosis_falls_back_to_the_exercises_lesson(learner, exercise):
    submission = failed(learner, exercise, "never-heard-of-it")
    assert failure_review.submission_review_schedule(submission=submission) > 0
    assert carded_lessons(learner) == {"first-lesson"}


def test_a_diagnosis_without_lessons_falls_back_too(learner, exercise):
    Diagnosis.objects.create(slug="not-an-int", summary="generic")
    failure_review.submission_review_schedule(
        submission=failed(learner, exercise, "not-an-int")
    )
    assert carded_lessons(learner) == {"first-lesson"}


def test_failures_without_a_diagnosis_and_passes_schedule_nothing(learner, exercise):
    undiagnosed = failed(learner, exercise, None, passed_too=True)
    assert failure_review.submission_review_schedule(submission=undiagnosed) == 0
    passed = Submission.objects.create(
        user=learner,
        exercise=exercise,
        code="x",
        seed=1,
        status="passed",
        checks=[{"name": "a", "passed": True, "message": "", "diagnosis": "x"}],
    )
    assert failure_review.submission_review_schedule(submission=passed) == 0
    assert not ReviewCard.objects.exists()


def test_only_failed_checks_count_and_repeats_do_not_duplicate(
    learner, exercise, lessons
):
    row = Diagnosis.objects.create(slug="forgot-biases", summary="biases")
    row.lessons.set([lessons["third-lesson"]])
    checks = [
        {"name": "a", "passed": True, "message": "", "diagnosis": "copied-not-shared"},
        {"name": "b", "passed": False, "message": "", "diagnosis": "forgot-biases"},
    ]
    submission = Submission.objects.create(
        user=learner,
        exercise=exercise,
        code="x",
        seed=1,
        status="failed",
        checks=checks,
    )
    first = failure_review.submission_review_schedule(submission=submission)
    again = failure_review.submission_review_schedule(submission=submission)
    assert first > 0 and again == 0  # already due: nothing changes
    assert carded_lessons(learner) == {"third-lesson"}
    assert ReviewCard.objects.count() == first


@pytest.mark.slow
def test_grading_a_wrong_answer_schedules_review_after_the_verdict_is_saved(
    learner, exercise, lessons, settings, django_capture_on_commit_callbacks
):
    """The real grading flow (cold sandbox) ends in the hook."""
    settings.GRADER_RUNNER = "cold"
    row = Diagnosis.objects.create(slug="forgot-biases-and-layernorms", summary="w")
    row.lessons.set([lessons["second-lesson"]])
    submission = Submission.objects.create(
        user=learner, exercise=exercise, code=FORGOT_ALL, seed=7, status="queued"
    )
    with django_capture_on_commit_callbacks(execute=True):
        status = submission_grading.submission_grade(submission_id=str(submission.pk))
    submission.refresh_from_db()
    assert status == submission.status == "failed"
    assert "forgot-biases-and-layernorms" in failure_review.failed_diagnoses(
        submission.checks
    )
    assert carded_lessons(learner) == {"second-lesson"}


@pytest.mark.slow
def test_a_failure_in_review_scheduling_never_loses_the_grade(
    learner, exercise, settings, django_capture_on_commit_callbacks, monkeypatch, caplog
):
    settings.GRADER_RUNNER = "cold"

    def broken(**kwargs):
        raise RuntimeError("review store is down")

    monkeypatch.setattr("quiz.learning.review.cards_schedule", broken)
    submission = Submission.objects.create(
        user=learner, exercise=exercise, code=FORGOT_ALL, seed=7, status="queued"
    )
    with django_capture_on_commit_callbacks(execute=True):
        status = submission_grading.submission_grade(submission_id=str(submission.pk))
    submission.refresh_from_db()
    assert status == submission.status == "failed"
    assert submission.checks and submission.finished_at is not None
    assert "could not schedule review" in caplog.text
    assert not ReviewCard.objects.exists()


@pytest.mark.slow
def test_a_passing_grade_schedules_nothing(
    learner, exercise, settings, django_capture_on_commit_callbacks
):
    settings.GRADER_RUNNER = "cold"
    submission = Submission.objects.create(
        user=learner, exercise=exercise, code=RIGHT, seed=7, status="queued"
    )
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert (
            submission_grading.submission_grade(submission_id=str(submission.pk))
            == "passed"
        )
    # Only the score notification (for an LMS); no review is scheduled.
    assert [c.__qualname__ for c in callbacks] == ["scores_changed.<locals>.notify"]
    assert not ReviewCard.objects.exists()


def test_one_failure_adds_at_most_a_few_cards_first_lesson_first(
    learner, content_tree, block_exercise
):
    many = [{"question": f"Q{n}?", "answer": "A."} for n in range(5)]
    content_tree.lesson("basics", 1, "first-lesson", follow_ups=many)
    content_tree.lesson("basics", 2, "second-lesson", follow_ups=many)
    content_load(root=content_tree.root)
    row = Diagnosis.objects.create(slug="copied-not-shared", summary="copied")
    second, first = (
        Lesson.objects.get(slug="second-lesson"),
        Lesson.objects.get(slug="first-lesson"),
    )
    row.lessons.set([second, first])
    block_exercise.lesson = first
    block_exercise.save()
    cap = failure_review.CARDS_PER_FAILURE
    assert 0 < cap < 10

    changed = failure_review.submission_review_schedule(
        submission=failed(learner, block_exercise, "copied-not-shared")
    )
    carded = list(
        ReviewCard.objects.filter(user=learner).values_list("follow_up", flat=True)
    )
    # Lessons in course order, each one's follow-ups in theirs.
    want = list(first.follow_ups.order_by("order").values_list("pk", flat=True))
    assert changed == cap and sorted(carded) == sorted(want[:cap])
    # The next failure adds the next ones, still at most the cap.
    again = failure_review.submission_review_schedule(
        submission=failed(learner, block_exercise, "copied-not-shared")
    )
    assert again == cap
    assert ReviewCard.objects.filter(user=learner).count() == 2 * cap
