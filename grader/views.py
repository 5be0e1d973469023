"""Exercise pages: read the prompt, submit code, watch the grade arrive."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render

from grader import selectors, services
from grader.models import Exercise, Submission


def _exercise_or_404(slug: str) -> Exercise:
    try:
        return selectors.exercise_get(slug=slug)
    except Exercise.DoesNotExist:
        raise Http404("No such exercise.") from None


def exercise_detail(request, slug: str):
    exercise = _exercise_or_404(slug)
    code = exercise.starter
    if request.method == "POST":
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        code = request.POST.get("code", "")
        try:
            submission = services.submission_create(
                user=request.user, exercise=exercise, code=code
            )
        except services.SubmissionRejected as exc:
            messages.error(request, str(exc))
        else:
            return redirect("submission", submission_id=submission.pk)
    attempts = (
        selectors.submissions_visible_to(request.user).filter(
            exercise=exercise, user=request.user
        )[:10]
        if request.user.is_authenticated
        else []
    )
    return render(
        request,
        "grader/exercise.html",
        {"exercise": exercise, "code": code, "attempts": attempts},
    )


@login_required
def submission_detail(request, submission_id):
    try:
        submission = selectors.submission_get(
            user=request.user, submission_id=submission_id
        )
    except (Submission.DoesNotExist, ValidationError):
        raise Http404("No such submission.") from None
    return render(
        request,
        "grader/submission.html",
        {
            "submission": submission,
            "queue_position": selectors.submission_queue_position(submission),
        },
    )
