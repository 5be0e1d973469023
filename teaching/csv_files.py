"""CSV files of a cohort, safe to open in a spreadsheet; its submissions as one.

The progress matrix's CSV is teaching.matrix.csv_export.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from django.http import HttpResponse
from django.utils.text import slugify

from teaching.models import Cohort
from teaching.selectors import failed_checks

# A spreadsheet runs a cell that starts with one of these as a formula
# (OWASP "CSV injection"); a leading apostrophe makes it plain text.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_STARTS) else text


def csv_text(header: list[str], rows: Iterable[list]) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([csv_safe(h) for h in header])
    for row in rows:
        writer.writerow([csv_safe(v) for v in row])
    return out.getvalue()


def csv_response(*, text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def export_filename(cohort: Cohort, what: str) -> str:
    return f"{slugify(cohort.name) or 'cohort'}-{cohort.pk}-{what}.csv"


SUBMISSION_COLUMNS = [
    "id",
    "learner",
    "exercise",
    "status",
    "score",
    "created_at",
    "finished_at",
    "failed checks",
    "diagnoses",
    "code",
]


def submissions_csv(submissions: Iterable) -> str:
    rows = []
    for sub in submissions:
        failed = failed_checks(sub)
        rows.append(
            [
                str(sub.pk),
                sub.user.username,
                sub.exercise.slug,
                sub.status,
                sub.score,
                sub.created_at.isoformat(),
                sub.finished_at.isoformat() if sub.finished_at else "",
                "; ".join(c["name"] for c in failed),
                "; ".join(c["diagnosis"] for c in failed if c["diagnosis"]),
                sub.code,
            ]
        )
    return csv_text(SUBMISSION_COLUMNS, rows)
