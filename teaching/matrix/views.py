"""The cohort page (join link and progress matrix) and the matrix as CSV."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from teaching.access import cohort_or_404, instructor_required
from teaching.cohorts import join_url
from teaching.csv_files import csv_response, export_filename
from teaching.matrix.build import (
    SORT_FIXED,
    Matrix,
    UnknownSection,
    progress_matrix,
    progress_matrix_for,
)
from teaching.matrix.csv_export import matrix_csv
from teaching.matrix.overview import cohort_overview


def _sort_header(matrix: Matrix, name: str) -> dict:
    """The ?sort= link for a column (a second click reverses) and its arrow."""
    query = f"?sort={'-' + name if matrix.sort == name else name}"
    if matrix.section:
        query += f"&section={matrix.section}"
    arrow = {name: "▲", f"-{name}": "▼"}.get(matrix.sort, "")
    return {"link": query, "arrow": arrow}


@instructor_required
def cohort_detail(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    section_error = None
    try:
        matrix = progress_matrix_for(cohort=cohort, query=request.GET)
    except UnknownSection as exc:
        section_error = f"{exc} Showing every section."
        matrix = progress_matrix(cohort=cohort, sort=request.GET.get("sort", ""))
    # The overview always covers every section, whatever the detail shows.
    whole = progress_matrix(cohort=cohort) if matrix.section else matrix
    overview = cohort_overview(cohort=cohort, matrix=whole)
    sort_links = {name: _sort_header(matrix, name) for name in SORT_FIXED}
    lesson_headers = [(les, _sort_header(matrix, les.slug)) for les in matrix.lessons]
    return render(
        request,
        "teaching/instructor/cohort_detail.html",
        {
            "cohort": cohort,
            "join_url": join_url(request, cohort),
            "join_form_url": request.build_absolute_uri(reverse("cohort-join-form")),
            "matrix": matrix,
            "overview": overview,
            "section_error": section_error,
            "sort_links": sort_links,
            "lesson_headers": lesson_headers,
        },
    )


@instructor_required
def matrix_csv_view(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    try:
        matrix = progress_matrix_for(cohort=cohort, query=request.GET)
    except UnknownSection as exc:
        raise Http404(str(exc)) from None
    return csv_response(
        text=matrix_csv(matrix),
        filename=export_filename(cohort, "progress"),
    )
