"""The gradebook: learners x assignments, one assignment's detail, CSV files.

Reads only (quiz.teaching.assignments.scoring computes each figure). The
course total of a learner is their points over the points possible, summed
over the cohort's assignments that are not archived.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from quiz.teaching.assignments.scoring import LearnerScore, assignment_scores
from quiz.teaching.csv_files import csv_text
from quiz.teaching.models import Assignment, Cohort, CohortMembership

SORTS = ("learner", "total", "late")  # and "a<id>" for one assignment's score


def cohort_assignments(*, cohort: Cohort, archived: bool = False) -> QuerySet:
    qs = Assignment.objects.filter(cohort=cohort).prefetch_related("items")
    return qs.filter(archived_at__isnull=not archived)


def cohort_learners(cohort: Cohort) -> list[tuple[int, str]]:
    return list(
        CohortMembership.objects.filter(cohort=cohort)
        .order_by("user__username")
        .values_list("user_id", "user__username")
    )


def assignment_gradebook(assignment: Assignment) -> list[LearnerScore]:
    """One assignment, every member of its cohort, by username."""
    return assignment_scores(assignment, cohort_learners(assignment.cohort))


@dataclass
class GradebookRow:
    learner_id: int
    username: str
    scores: dict[int, LearnerScore]  # assignment id -> score
    # (assignment, its score) in the gradebook's column order
    cells_with_assignments: list[tuple[Assignment, LearnerScore]] | None = None

    @property
    def possible(self) -> float:
        return sum(s.possible for s in self.scores.values())

    @property
    def points(self) -> float:
        return sum(s.points for s in self.scores.values())

    @property
    def total(self) -> float:
        return self.points / self.possible if self.possible else 0.0

    @property
    def late(self) -> int:
        return sum(1 for s in self.scores.values() if s.late)


@dataclass
class CohortGradebook:
    cohort: Cohort
    assignments: list[Assignment]
    rows: list[GradebookRow]
    sort: str

    @property
    def columns(self) -> list[tuple[Assignment, str]]:
        """Each assignment with its sort key."""
        return [(a, f"a{a.pk}") for a in self.assignments]


def cohort_gradebook(*, cohort: Cohort, sort: str = "learner") -> CohortGradebook:
    """Learners x the cohort's assignments, with totals, sorted by `sort`.

    `sort` is "learner", "total" (highest first), "late" (most late first)
    or "a<id>" (that assignment's score, highest first); anything else is
    "learner".
    """
    assignments = list(cohort_assignments(cohort=cohort))
    learners = cohort_learners(cohort)
    rows = {
        learner_id: GradebookRow(learner_id, username, {})
        for learner_id, username in learners
    }
    for assignment in assignments:
        for score in assignment_scores(assignment, learners):
            rows[score.learner_id].scores[assignment.pk] = score
    ordered = list(rows.values())
    for row in ordered:
        row.cells_with_assignments = [(a, row.scores[a.pk]) for a in assignments]
    ids = {f"a{a.pk}": a.pk for a in assignments}
    if sort == "total":
        ordered.sort(key=lambda r: (-r.total, r.username))
    elif sort == "late":
        ordered.sort(key=lambda r: (-r.late, r.username))
    elif sort in ids:
        ordered.sort(key=lambda r: (-r.scores[ids[sort]].score, r.username))
    else:
        sort = "learner"
    return CohortGradebook(cohort, assignments, ordered, sort)


def percent(score: float) -> float:
    return round(100 * score, 1)


def assignment_csv(assignment: Assignment, scores: list[LearnerScore]) -> str:
    items = list(assignment.items.select_related("exercise", "lesson"))
    header = ["learner", "due_at", "extended", "late"]
    header += [f"{item.label} (x{item.weight:g})" for item in items]
    header += ["points", "possible", "score %"]
    rows = []
    for score in scores:
        by_item = {s.item.pk: s for s in score.items}
        rows.append(
            [
                score.username,
                score.due_at.isoformat(),
                score.extended,
                score.late,
                *(round(by_item[item.pk].score, 4) for item in items),
                round(score.points, 4),
                round(score.possible, 4),
                percent(score.score),
            ]
        )
    return csv_text(header, rows)


def cohort_csv(book: CohortGradebook) -> str:
    header = ["learner", *(f"{a.title} %" for a in book.assignments)]
    header += ["points", "possible", "total %"]
    rows = [
        [
            row.username,
            *(percent(row.scores[a.pk].score) for a in book.assignments),
            round(row.points, 4),
            round(row.possible, 4),
            percent(row.total),
        ]
        for row in book.rows
    ]
    return csv_text(header, rows)


# Canvas's gradebook import: its own first columns, then one column per
# assignment holding points. Canvas matches a row to a student by "SIS Login
# ID" here (the username; "ID", Canvas's own user id, is not known to us and
# left empty), and a column named without "(id)" creates a new assignment.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def canvas_csv(
    *, section: str, assignments: list[Assignment], rows: list[GradebookRow]
) -> str:
    """Points per assignment in the shape Canvas's gradebook import reads."""
    header = [*CANVAS_COLUMNS, *(a.title for a in assignments)]
    possible = [sum(item.weight for item in a.items.all()) for a in assignments]
    table = [["Points Possible", "", "", "", "", *possible]]
    for row in rows:
        points = [round(row.scores[a.pk].points, 2) for a in assignments]
        table.append([row.username, "", "", row.username, section, *points])
    return csv_text(header, table)
