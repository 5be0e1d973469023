"""Exercise pages: read the prompt, submit code, watch the grade arrive."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.contrib.staticfiles import finders
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from grader import check_feedback, selectors, services
from grader.budgets import exercise_budget
from grader.exercise_notes import exercise_notes
from grader.models import Exercise, Submission
from quiz.core.exam_mode import ExamLocked, exercise_check
from quiz.core.nul_input import nul_judged_by_view

EDITOR_JS = "vendor/editor.js"


def _exercise_or_404(slug: str) -> Exercise:
    try:
        return selectors.exercise_get(slug=slug)
    except Exercise.DoesNotExist:
        raise Http404("No such exercise.") from None


def exercise_index(request):
    """Every published exercise by section, with the learner's status on each."""
    sections = selectors.exercise_index(user=request.user)
    counts = {"total": 0, "passed": 0}
    for section in sections:
        for entry in section.entries:
            counts["total"] += 1
            counts["passed"] += entry.status == "passed"
    return render(
        request,
        "grader/exercise_index.html",
        {"sections": sections, "counts": counts},
    )


def _exam_locked(request, lock: ExamLocked):
    """Exam mode's 403: the page says why and when it opens again."""
    return render(request, "quiz/exam_locked.html", {"message": str(lock)}, status=403)


@nul_judged_by_view  # NUL in code: the page says so, the code kept
def exercise_detail(request, slug: str):
    exercise = _exercise_or_404(slug)
    try:
        # Its reference solution, checks and past code would answer the quiz.
        exercise_check(request.user, exercise.slug, "This exercise")
    except ExamLocked as lock:
        return _exam_locked(request, lock)
    last = selectors.last_attempt(user=request.user, exercise=exercise)
    # "Try again" resumes from the learner's last attempt, not the starter.
    code = last.code if last else exercise.starter
    status, headers = 200, {}
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        code = request.POST.get("code", "")
        try:
            submission = services.submission_create(
                user=request.user, exercise=exercise, code=code
            )
        except services.SubmissionThrottled as exc:
            # The API's budget too; the code stays in the editor, nothing lost.
            wait = exc.retry_after
            messages.error(
                request,
                f"Not submitted: {exc}. Your code is kept below; try again in "
                f"{wait} second{'s' * (wait != 1)}.",
            )
            status, headers = 429, {"Retry-After": str(wait)}
        except services.SubmissionRejected as exc:
            messages.error(request, str(exc))
        else:
            return redirect("submission", submission_id=submission.pk)
    response = render(
        request,
        "grader/exercise.html",
        _exercise_context(request, exercise, code, last=last),
        status=status,
    )
    for name, value in headers.items():
        response[name] = value
    return response


def _exercise_context(request, exercise: Exercise, code: str, *, last=None) -> dict:
    attempts = selectors.attempt_history(user=request.user, exercise=exercise)
    # A cancelled attempt has no result to show: the latest graded one stands.
    latest = next(
        (a for a in attempts if a.is_terminal and a.status != "cancelled"), None
    )
    checks = (
        check_feedback.checks_for_display(
            checks=latest.checks, fallback_lesson=exercise.lesson
        )
        if latest
        else []
    )
    solution = selectors.solution_access(user=request.user, exercise=exercise)
    return {
        "exercise": exercise,
        "code": code,
        "last_attempt": last,
        # A local draft belongs to the attempt it was typed over: after a newer
        # submission (from another tab or device) it is stale and dropped.
        "draft_base": str(last.pk) if last else "starter",
        "attempts": attempts,
        "latest": latest,
        "latest_checks": checks,
        "latest_mistakes": check_feedback.mistakes_from(checks),
        "solution": solution,
        "hints": check_feedback.hint_level(
            failures=solution.graded, passed=solution.passed
        ),
        "budget": exercise_budget(exercise),
        "due_notes": exercise_notes(user=request.user, exercise=exercise),
        # Without a built bundle the page keeps the plain textarea.
        "editor_js": finders.find(EDITOR_JS) is not None,
    }


@login_required
def submission_detail(request, submission_id):
    try:
        submission = selectors.submission_get(
            user=request.user, submission_id=submission_id
        )
    except (Submission.DoesNotExist, ValidationError):
        raise Http404("No such submission.") from None
    exercise = submission.exercise
    own = submission.user_id == request.user.pk
    if own:
        try:
            exercise_check(request.user, exercise.slug, "This submission's feedback")
        except ExamLocked as lock:
            return _exam_locked(request, lock)
    checks = check_feedback.checks_for_display(
        checks=submission.checks, fallback_lesson=exercise.lesson
    )
    budget = submission.time_budget_seconds or exercise_budget(exercise).seconds
    solution = selectors.solution_access(user=request.user, exercise=exercise)
    # Hints follow the owner's attempts; an instructor reading it sees all.
    hints = check_feedback.hint_level(
        failures=solution.graded, passed=solution.passed, full=not own
    )
    return render(
        request,
        "grader/submission.html",
        {
            "submission": submission,
            "exercise": exercise,
            "queue_position": selectors.submission_queue_position(submission),
            "checks": checks,
            "mistakes": check_feedback.mistakes_from(checks),
            "solution": solution,
            "hints": hints,
            "budget_seconds": budget,
            "behind_own": selectors.submission_waits_behind_own(submission),
            "set_aside_wait": selectors.SET_ASIDE_WAIT,
            "own": own,
        },
    )


@login_required
@require_POST
def submission_cancel(request, submission_id):
    """The Cancel button without JavaScript: cancel, then back to the page."""
    try:
        services.submission_cancel(user=request.user, submission_id=submission_id)
    except (Submission.DoesNotExist, ValidationError):
        raise Http404("No such submission.") from None
    except services.CancelRefused as exc:
        messages.info(request, f"Not cancelled: {exc}.")
    else:
        messages.success(request, "Cancelled.")
    return redirect("submission", submission_id=submission_id)
