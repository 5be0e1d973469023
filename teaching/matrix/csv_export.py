"""The progress matrix as CSV: one row per learner, three columns per lesson."""

from __future__ import annotations

from teaching.csv_files import csv_text
from teaching.matrix.build import Matrix


def matrix_csv(matrix: Matrix) -> str:
    """One row per learner; three columns per lesson, then the totals."""
    header = ["learner"]
    for lesson in matrix.lessons:
        header += [
            f"{lesson.slug} read",
            f"{lesson.slug} self-checks right (of {lesson.checks_total})",
            f"{lesson.slug} exercises passed (of {lesson.exercises_total})",
        ]
    header += ["lessons read", "self-checks right", "exercises passed"]
    rows = []
    for row in matrix.rows:
        values: list = [row.username]
        for cell in row.cells:
            values += [cell.read, cell.checks_right, cell.exercises_passed]
        values += [row.lessons_read, row.checks_right, row.exercises_passed]
        rows.append(values)
    return csv_text(header, rows)
