"""Code questions in a quiz: the grader grades them, on the quiz's terms.

The code is written within the quiz's time (a save after the deadline is
refused like any answer) and kept in the attempt's answers. The grader's
submission is made only when the feedback policy lets its checks show,
because the grader's pages, API and event stream show a submission's checks
at once: at a Check with immediate feedback, at submission with
after_submit, after the last close with after_close. Until then the grader
holds nothing a learner could read.

Every code submission goes through grader.services.submission_create, so
its size checks, rate and outstanding cap hold here too: code the grader
refuses for now (throttled) waits in `code_waiting` for the periodic sweep.
A verdict reaches the attempt through the score listener (`code_verdicts`),
which also follows an exercise regrade that changes a submission's score.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.utils import timezone

from grader.models import Exercise, Submission
from grader.services import (
    SubmissionRejected,
    SubmissionThrottled,
    code_problem,
    submission_create,
)
from teaching.quizzes.models import Quiz, QuizAttempt, QuizCodeAnswer
from teaching.quizzes.policy import feedback_open

log = logging.getLogger(__name__)
SWEEP_LIMIT = 500  # attempts per sweep; the next sweep takes the rest


def is_code(item: dict) -> bool:
    return item["ref"].startswith("x:")


def starter_of(item: dict) -> str:
    """The starter code of a code question's exercise ("" if it is gone)."""
    starter = (
        Exercise.objects.filter(slug=item["ref"][2:])
        .values_list("starter", flat=True)
        .first()
    )
    return starter or ""


def normal_lines(text: str) -> str:
    """Text with Unix line endings: a browser's form sends CRLF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def clean_code(value, *, starter: str = "") -> str | None:
    """Code as stored (None for the starter sent back untouched: not an
    answer), or ValueError saying what the grader would refuse."""
    if not isinstance(value, str):
        raise ValueError("Write Python code (text).")
    value = normal_lines(value)
    if not value.strip() or value.strip() == normal_lines(starter).strip():
        return None
    problem = code_problem(value)
    if problem:
        raise ValueError(problem[0].upper() + problem[1:] + ".")
    return value


def _due(attempt: QuizAttempt, now: datetime) -> bool:
    """May this attempt's saved code be graded (its checks shown) now?"""
    if attempt.state == QuizAttempt.State.IN_PROGRESS:
        # Immediate feedback: a saved answer is checked, and final, at once.
        return attempt.quiz.feedback == Quiz.Feedback.IMMEDIATE and not attempt.preview
    return feedback_open(attempt, now)


def code_release(attempt: QuizAttempt, now: datetime | None = None) -> int:
    """Send the attempt's saved, ungraded code to the grader if the policy allows.

    Locks the attempt, so the sweep and a learner's submit never send the
    same answer twice (and the (attempt, item) constraint backs that up).
    Returns how many went; `code_waiting` stays set while any must wait.
    """
    now = now or timezone.now()
    with transaction.atomic():
        attempt = (
            QuizAttempt.objects.select_for_update()
            .select_related("quiz", "learner")
            .get(pk=attempt.pk)
        )
        if not attempt.code_waiting or not _due(attempt, now):
            return 0
        numbers = {
            n: item["ref"][2:]
            for n, item in enumerate(attempt.items, start=1)
            if is_code(item)
            and (attempt.answers.get(str(n)) or {}).get("value") not in (None, "")
        }
        sent = set(attempt.code_answers.values_list("item", flat=True))
        waiting = {n: slug for n, slug in numbers.items() if n not in sent}
        exercises = {
            e.slug: e for e in Exercise.objects.filter(slug__in=waiting.values())
        }
        released, throttled = 0, False
        for n, slug in sorted(waiting.items()):
            code = attempt.answers[str(n)]["value"]
            exercise = exercises.get(slug)
            row = QuizCodeAnswer(attempt=attempt, item=n)
            if exercise is None or not exercise.published:
                row.refused, row.fraction = "This exercise was removed.", 0.0
            else:
                try:
                    row.submission = submission_create(
                        user=attempt.learner,
                        exercise=exercise,
                        code=code,
                        for_quiz=True,
                    )
                except SubmissionThrottled:
                    throttled = True  # the learner's own queue is full: later
                    continue
                except SubmissionRejected as exc:
                    row.refused, row.fraction = str(exc)[:300], 0.0
                except Exception:
                    # The submit (or check) must not fail for the grader's
                    # sake (its cache down, say): the sweep sends it later.
                    log.exception("quiz code for attempt %s held", attempt.pk)
                    throttled = True
                    continue
            row.save()
            released += 1
        attempt.code_waiting = throttled
        attempt.save(update_fields=["code_waiting"])
    return released


def code_sweep(now: datetime | None = None) -> int:
    """Release the code of every attempt whose feedback has opened (periodic).

    Picks up after_close quizzes once they close, after_submit ones once the
    learner's attempts are used or the quiz has closed, and code the grader
    throttled earlier. The filter is a superset (a learner's extra attempts
    and later close are code_release's to weigh), narrow enough that
    attempts still waiting on their learner never fill a sweep's SWEEP_LIMIT.
    """
    now = now or timezone.now()
    used = Subquery(
        QuizAttempt.objects.filter(
            quiz=OuterRef("quiz"), learner=OuterRef("learner"), preview=False
        )
        .values("learner")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    closed = Q(quiz__closes_at__lte=now)
    opened = (
        Q(preview=True)
        | Q(quiz__feedback=Quiz.Feedback.IMMEDIATE)
        | closed
        | Q(
            quiz__feedback=Quiz.Feedback.AFTER_SUBMIT,
            used__gte=F("quiz__attempts_allowed"),
        )
    )
    candidates = (
        QuizAttempt.objects.filter(code_waiting=True)
        .annotate(used=used)
        .filter(
            (Q(state=QuizAttempt.State.SUBMITTED) & opened)
            | Q(
                state=QuizAttempt.State.IN_PROGRESS,
                preview=False,
                quiz__feedback=Quiz.Feedback.IMMEDIATE,
            )
        )
    )
    released = 0
    for attempt in candidates.order_by("pk")[:SWEEP_LIMIT]:
        released += code_release(attempt, now)
    return released


def code_rows(attempt: QuizAttempt) -> dict[int, QuizCodeAnswer]:
    """The attempt's code answers the grader took, by question number."""
    if not any(is_code(item) for item in attempt.items):
        return {}
    rows = attempt.code_answers.select_related("submission")
    return {row.item: row for row in rows}


def row_fraction(row: QuizCodeAnswer | None) -> float:
    """What a code answer counts for now: its verdict's score, 0 until then."""
    if row is None or row.submission is None:
        return 0.0  # not sent yet, or refused by the grader
    submission = row.submission
    if submission.status in Submission.TERMINAL and submission.score is not None:
        return float(submission.score)
    return 0.0


def code_feedback(row: QuizCodeAnswer | None, answered: bool) -> dict:
    """A code question's verdict as its learner sees it once the policy allows."""
    if row is None:
        status = "waiting" if answered else "not_answered"
        return {"status": status, "correct": False, "score": None, "checks": []}
    if row.submission is None:
        return {
            "status": "refused",
            "correct": False,
            "score": 0.0,
            "checks": [],
            "refused": row.refused,
        }
    submission = row.submission
    done = submission.status in Submission.TERMINAL
    return {
        "status": submission.status,
        "correct": submission.status == Submission.Status.PASSED,
        "score": row_fraction(row) if done else None,
        "checks": [
            {
                "name": c.get("name", ""),
                "passed": bool(c.get("passed")),
                "message": c.get("message", ""),
                "diagnosis": c.get("diagnosis"),
            }
            for c in (submission.checks or [])
        ],
        "submission": str(submission.pk),
    }
