"""Instructor pages (cohorts, progress, analytics, CSV) and the learner's join page.

Thin views: reads in quiz.cohort_selectors and quiz.analytics, writes in
quiz.cohorts. A cohort that is not the instructor's, or a learner who is not
in it, is a 404 so that nobody can probe which ids exist.
"""

from __future__ import annotations

from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from quiz import cohort_selectors as sel
from quiz import csv_export
from quiz.analytics import cohort_analytics
from quiz.cohorts import CohortError, cohort_create, cohort_join, member_remove
from quiz.models import Cohort, CohortMembership
from quiz.params import id_in_range


def instructor_required(view):
    """Anonymous: the login page. Signed in but not an instructor: 403."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not sel.user_can_teach(request.user):
            raise PermissionDenied("Only instructors can open this page.")
        return view(request, *args, **kwargs)

    return wrapped


def _cohort_or_404(request, cohort_id) -> Cohort:
    if not id_in_range(cohort_id):  # past bigint: no such row, not a DataError
        raise Http404("No such cohort.")
    try:
        return sel.cohort_get(user=request.user, cohort_id=cohort_id)
    except Cohort.DoesNotExist:
        raise Http404("No such cohort.") from None


def join_url(request, cohort: Cohort) -> str:
    return request.build_absolute_uri(reverse("cohort-join", args=[cohort.join_code]))


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
        "instructor/cohort_list.html",
        {"cohorts": sel.cohort_list(user=request.user), "name": name},
    )


def _sort_header(matrix: sel.Matrix, name: str) -> dict:
    """The ?sort= link for a column (a second click reverses) and its arrow."""
    query = f"?sort={'-' + name if matrix.sort == name else name}"
    if matrix.section:
        query += f"&section={matrix.section}"
    arrow = {name: "▲", f"-{name}": "▼"}.get(matrix.sort, "")
    return {"link": query, "arrow": arrow}


@instructor_required
def cohort_detail(request, cohort_id: int):
    cohort = _cohort_or_404(request, cohort_id)
    section_error = None
    try:
        matrix = sel.progress_matrix(
            cohort=cohort,
            section=request.GET.get("section"),
            sort=request.GET.get("sort", "learner"),
        )
    except sel.UnknownSection as exc:
        section_error = f"{exc} Showing every section."
        matrix = sel.progress_matrix(cohort=cohort, sort=request.GET.get("sort", ""))
    sort_links = {name: _sort_header(matrix, name) for name in sel.SORT_FIXED}
    lesson_headers = [(les, _sort_header(matrix, les.slug)) for les in matrix.lessons]
    return render(
        request,
        "instructor/cohort_detail.html",
        {
            "cohort": cohort,
            "join_url": join_url(request, cohort),
            "matrix": matrix,
            "section_error": section_error,
            "sort_links": sort_links,
            "lesson_headers": lesson_headers,
        },
    )


@instructor_required
@require_http_methods(["GET", "POST"])
def member_remove_view(request, cohort_id: int, user_id: int):
    """GET asks for confirmation (works without JS); POST removes."""
    cohort = _cohort_or_404(request, cohort_id)
    try:
        if not id_in_range(user_id):
            raise CohortMembership.DoesNotExist
        membership = sel.cohort_member_get(cohort=cohort, user_id=user_id)
    except CohortMembership.DoesNotExist:
        raise Http404("No such learner in this cohort.") from None
    if request.method == "POST":
        member_remove(cohort=cohort, user_id=user_id)
        messages.success(
            request, f"Removed {membership.user.username} from {cohort.name}."
        )
        return redirect("instructor-cohort", cohort_id=cohort.pk)
    return render(
        request,
        "instructor/member_remove.html",
        {"cohort": cohort, "membership": membership},
    )


@instructor_required
def learner_detail(request, cohort_id: int, user_id: int):
    cohort = _cohort_or_404(request, cohort_id)
    try:
        if not id_in_range(user_id):
            raise CohortMembership.DoesNotExist
        work = sel.learner_work(cohort=cohort, user_id=user_id)
    except CohortMembership.DoesNotExist:
        raise Http404("No such learner in this cohort.") from None
    submissions = [(s, sel.failed_checks(s)) for s in work.submissions]
    return render(
        request,
        "instructor/learner.html",
        {"cohort": cohort, "work": work, "submissions": submissions},
    )


@instructor_required
def cohort_analytics_view(request, cohort_id: int):
    cohort = _cohort_or_404(request, cohort_id)
    analytics = cohort_analytics(cohort=cohort)
    chart_data = {
        "exercises": {
            "labels": [e.slug for e in analytics.exercises],
            "pass_rate": [
                None if e.pass_rate is None else round(100 * e.pass_rate, 1)
                for e in analytics.exercises
            ],
            "attempts": [e.attempts for e in analytics.exercises],
        },
        "diagnoses": {
            "labels": [
                f"{e.slug}: {d.diagnosis}"
                for e in analytics.exercises
                for d in e.diagnoses
            ],
            "counts": [d.count for e in analytics.exercises for d in e.diagnoses],
        },
        "questions": {
            "labels": [f"{q.lesson} #{q.id}" for q in analytics.questions],
            "percent_right": [q.percent_right for q in analytics.questions],
        },
    }
    return render(
        request,
        "instructor/analytics.html",
        {"cohort": cohort, "analytics": analytics, "chart_data": chart_data},
    )


@instructor_required
def matrix_csv_view(request, cohort_id: int):
    cohort = _cohort_or_404(request, cohort_id)
    try:
        matrix = sel.progress_matrix(
            cohort=cohort,
            section=request.GET.get("section"),
            sort=request.GET.get("sort", "learner"),
        )
    except sel.UnknownSection as exc:
        raise Http404(str(exc)) from None
    return csv_export.csv_response(
        text=csv_export.matrix_csv(matrix),
        filename=csv_export.export_filename(cohort, "progress"),
    )


@instructor_required
def submissions_csv_view(request, cohort_id: int):
    cohort = _cohort_or_404(request, cohort_id)
    return csv_export.csv_response(
        text=csv_export.submissions_csv(sel.cohort_submissions(cohort=cohort)),
        filename=csv_export.export_filename(cohort, "submissions"),
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
        "cohorts/join_form.html",
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
        "cohorts/join.html",
        {
            "cohort": cohort,
            "is_member": sel.cohort_is_member(cohort=cohort, user=request.user),
            "is_owner": cohort.owner_id == request.user.pk,
        },
    )
