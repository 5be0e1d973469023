"""A failed exercise schedules review of the lessons that teach its mistakes.

Each failed check may name a diagnosis ("copied-not-shared"); content/
diagnoses.yaml maps diagnoses to lessons, and those lessons' follow-ups
become due for the learner now. A failed check without a diagnosis schedules
nothing: we do not know what was misunderstood (a typo is not a lesson).
"""

from __future__ import annotations

import logging

from grader.models import Submission
from quiz.content.diagnoses import diagnoses_for, diagnosis_lessons
from quiz.content.models import FollowUp
from quiz.learning import review

log = logging.getLogger(__name__)

CARDS_PER_FAILURE = 3  # review cards one failed submission may add or pull


def failed_diagnoses(checks) -> set[str]:
    """Diagnosis slugs named by the failed checks of a stored result."""
    return {
        check["diagnosis"]
        for check in checks or []
        if isinstance(check, dict)
        and not check.get("passed")
        and isinstance(check.get("diagnosis"), str)
        and check["diagnosis"]
    }


def lessons_for_diagnoses(slugs, *, fallback) -> list:
    """Lessons that teach `slugs`; an unmapped or lesson-less one uses `fallback`."""
    rows = diagnoses_for(slugs)
    lessons: dict[int, object] = {}
    for slug in slugs:
        for lesson in diagnosis_lessons(rows.get(slug), fallback=fallback):
            lessons[lesson.pk] = lesson
    return list(lessons.values())


def submission_review_schedule(*, submission: Submission) -> int:
    """Schedule the follow-ups behind a failed submission's mistakes.

    Returns how many review cards changed (0 for anything but a failure).
    """
    if submission.status != Submission.Status.FAILED:
        return 0
    slugs = failed_diagnoses(submission.checks)
    if not slugs:
        return 0
    lessons = lessons_for_diagnoses(slugs, fallback=submission.exercise.lesson)
    if not lessons:
        return 0
    # The first lesson's follow-ups first, in their order; at most
    # CARDS_PER_FAILURE per failed submission, so one failure never buries
    # the learner's queue (the next failure adds the next ones).
    rank = {lesson.pk: n for n, lesson in enumerate(lessons)}
    follow_ups = sorted(
        FollowUp.objects.filter(lesson__in=lessons),
        key=lambda f: (rank[f.lesson_id], f.order, f.pk),
    )
    return review.cards_schedule(
        user=submission.user,
        follow_ups=follow_ups,
        reason="exercise",
        limit=CARDS_PER_FAILURE,
    )


def submission_review_schedule_safely(*, submission_id) -> int:
    """The grading hook: review scheduling must never cost the learner the grade.

    Runs after the verdict is committed; any failure here is logged and
    swallowed, because the grade is what the learner is waiting for.
    """
    try:
        submission = Submission.objects.select_related("user", "exercise__lesson").get(
            pk=submission_id
        )
        return submission_review_schedule(submission=submission)
    except Exception:  # noqa: BLE001 - see docstring
        log.exception("could not schedule review for submission %s", submission_id)
        return 0
