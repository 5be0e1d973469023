"""Instructor pages (cohorts, one learner, analytics, submissions CSV) and the
learner's join pages. The cohort page with its progress matrix is
teaching.matrix.views.

Thin views: reads in teaching.selectors and teaching.cohort_analytics,
writes in teaching.cohorts, access rules in teaching.access.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from quiz.content.markdown import render_markdown_plain
from teaching import csv_files
from teaching import selectors as sel
from teaching.access import (
    cohort_or_404,
    instructor_required,
    member_read_or_404,
)
from teaching.cohort_analytics import cohort_analytics
from teaching.cohorts import CohortError, cohort_create, cohort_join, member_remove
from teaching.models import Cohort


@instructor_required
@require_http_methods(["GET", "POST"])
def cohort_list(request):
    name = ""
    if request.method == "POST":
        name = request.POST.get("name", "")
        try:
            cohort = cohort_create(owner=request.user, name=name)
        except CohortError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, f"Created {cohort.name}; share its join link.")
            return redirect("instructor-cohort", cohort_id=cohort.pk)
    return render(
        request,
        "teaching/instructor/cohort_list.html",
        {"cohorts": sel.cohort_list(user=request.user), "name": name},
    )


@instructor_required
@require_http_methods(["GET", "POST"])
def member_remove_view(request, cohort_id: int, user_id: int):
    """GET asks for confirmation (works without JS); POST removes."""
    cohort = cohort_or_404(request, cohort_id)
    membership = member_read_or_404(
        sel.cohort_member_get, cohort=cohort, user_id=user_id
    )
    if request.method == "POST":
        member_remove(cohort=cohort, user_id=user_id)
        messages.success(
            request, f"Removed {membership.user.username} from {cohort.name}."
        )
        return redirect("instructor-cohort", cohort_id=cohort.pk)
    return render(
        request,
        "teaching/instructor/member_remove.html",
        {"cohort": cohort, "membership": membership},
    )


@instructor_required
def learner_detail(request, cohort_id: int, user_id: int):
    cohort = cohort_or_404(request, cohort_id)
    work = member_read_or_404(sel.learner_work, cohort=cohort, user_id=user_id)
    submissions = [(s, sel.failed_checks(s)) for s in work.submissions]
    return render(
        request,
        "teaching/instructor/learner.html",
        {"cohort": cohort, "work": work, "submissions": submissions},
    )


@instructor_required
def cohort_analytics_view(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    analytics = cohort_analytics(cohort=cohort)
    active = analytics.active_exercises  # the chart leaves out the zeros
    chart_data = {
        "exercises": {
            "labels": [render_markdown_plain(e.title) for e in active],
            "pass_rate": [
                None if e.pass_rate is None else round(100 * e.pass_rate, 1)
                for e in active
            ],
            "attempts": [e.attempts for e in active],
        },
        "diagnoses": {
            "labels": [
                f"{e.title}: {d.diagnosis}" for e in active for d in e.diagnoses
            ],
            "counts": [d.count for e in active for d in e.diagnoses],
        },
        "questions": {
            "labels": [q.label for q in analytics.questions],
            "percent_right": [q.percent_right for q in analytics.questions],
        },
    }
    return render(
        request,
        "teaching/instructor/analytics.html",
        {"cohort": cohort, "analytics": analytics, "chart_data": chart_data},
    )


@instructor_required
def submissions_csv_view(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    return csv_files.csv_response(
        text=csv_files.submissions_csv(sel.cohort_submissions(cohort=cohort)),
        filename=csv_files.export_filename(cohort, "submissions"),
    )


# Learners joining ----------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def join_form(request):
    """Type a code; it leads to the same page as the join link."""
    code = request.POST.get("code", "") if request.method == "POST" else ""
    error = None
    if request.method == "POST":
        try:
            cohort = sel.cohort_get_by_code(code=code)
        except Cohort.DoesNotExist:
            error = "No cohort has that code; check it with your instructor."
        else:
            return redirect("cohort-join", code=cohort.join_code)
    return render(
        request,
        "teaching/cohorts/join_form.html",
        {"code": code, "error": error},
        status=400 if error else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def join(request, code: str):
    try:
        cohort = sel.cohort_get_by_code(code=code)
    except Cohort.DoesNotExist:
        raise Http404("No cohort has that code.") from None
    if request.method == "POST":
        try:
            _, created = cohort_join(cohort=cohort, user=request.user)
        except CohortError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(
                request,
                f"You joined {cohort.name}."
                if created
                else f"You are already in {cohort.name}.",
            )
            return redirect("cohort-join", code=cohort.join_code)
    return render(
        request,
        "teaching/cohorts/join.html",
        {
            "cohort": cohort,
            "is_member": sel.cohort_is_member(cohort=cohort, user=request.user),
            "is_owner": cohort.owner_id == request.user.pk,
        },
    )
