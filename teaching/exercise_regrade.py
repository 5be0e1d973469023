"""Asking for a regrade and following it: the progress page, the report.

An instructor regrades one exercise for a cohort they own; a superuser
also for everyone. The work runs in the grading workers, behind live grades
(grader.regrade_grading); this module only checks who may ask and shows progress.
Its API is teaching.api (views.RegradeStartView, RegradeDetailView).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from grader import services as grader_services
from grader.models import Exercise, Regrade, RegradeResult
from quiz.core.params import id_in_range
from teaching import selectors as sel
from teaching.access import instructor_required
from teaching.models import Cohort

REPORT_LIMIT = 10_000  # every change of a 1,000-submission regrade, and more


class RegradeRefused(Exception):  # noqa: N818 - reads as what happened
    def __init__(self, message: str, *, missing: bool = False):
        super().__init__(message)
        self.missing = missing


def regrade_request(*, user, slug: str, cohort_id: int | None) -> Regrade:
    """Start a regrade of `slug` for a cohort `user` owns, or (superuser) all."""
    exercise = Exercise.objects.filter(slug=slug).first()
    if exercise is None:
        raise RegradeRefused(f"No exercise named {slug!r}.", missing=True)
    if cohort_id is None:
        if not user.is_superuser:
            raise RegradeRefused(
                "Only an admin regrades everyone's submissions; name your cohort."
            )
        return grader_services.regrade_start(
            exercise=exercise, requested_by=user, scope="everyone"
        )
    try:
        cohort = sel.cohort_get(user=user, cohort_id=cohort_id)
    except Cohort.DoesNotExist:
        raise RegradeRefused("No such cohort.", missing=True) from None
    members = list(sel.member_ids(cohort).values_list("user_id", flat=True))
    return grader_services.regrade_start(
        exercise=exercise,
        requested_by=user,
        scope=f"cohort {cohort.name}",
        user_ids=members,
        cohort_id=cohort.pk,
    )


def regrade_visible(*, user, regrade_id: int) -> Regrade:
    """The regrade if `user` asked for it, owns its cohort or is a superuser."""
    if not id_in_range(regrade_id):
        raise Regrade.DoesNotExist
    regrade = Regrade.objects.select_related("exercise", "requested_by").get(
        pk=regrade_id
    )
    if user.is_superuser or regrade.requested_by_id == user.pk:
        return regrade
    if (
        regrade.cohort_id
        and sel.cohort_list(user=user).filter(pk=regrade.cohort_id).exists()
    ):
        return regrade
    raise Regrade.DoesNotExist


def regrade_changes(regrade: Regrade) -> list[RegradeResult]:
    return list(
        regrade.results.filter(changed=True)
        .select_related("submission__user")
        .order_by("pk")[:REPORT_LIMIT]
    )


def direction(result: RegradeResult) -> str:
    old, new = result.old_status, result.new_status
    if old == new:
        return "score"
    if old == "passed":
        return "pass→fail" if new == "failed" else f"pass→{new}"
    if new == "passed":
        return "fail→pass" if old == "failed" else f"{old}→pass"
    return f"{old}→{new}"


# Pages ---------------------------------------------------------------------------


@instructor_required
@require_POST
def regrade_start_view(request, cohort_id: int):
    """The analytics page's Regrade button: start, then watch its progress."""
    try:
        regrade = regrade_request(
            user=request.user,
            slug=request.POST.get("exercise", ""),
            cohort_id=cohort_id,
        )
    except RegradeRefused as exc:
        raise Http404(str(exc)) from None
    messages.success(
        request, f"Regrading {regrade.exercise.slug}: {regrade.total} submissions."
    )
    return redirect("instructor-regrade", regrade_id=regrade.pk)


@instructor_required
def regrade_view(request, regrade_id: int):
    try:
        regrade = regrade_visible(user=request.user, regrade_id=regrade_id)
    except Regrade.DoesNotExist:
        raise Http404("No such regrade.") from None
    changes = [(r, direction(r)) for r in regrade_changes(regrade)]
    return render(
        request,
        "teaching/instructor/regrade.html",
        {
            "regrade": regrade,
            "changes": changes,
            "api_url": reverse("api-regrade", args=[regrade.pk]),
        },
    )
