"""The gradebook: learners x assignments (and quizzes), one assignment's
detail, CSV files.

Reads only (teaching.assignments.scoring computes each figure). The
course total of a learner is their points over the points possible, summed
over the cohort's assignments that are not archived. Each quiz of the cohort
that is not archived is a column too, with the quiz's own score (its rule
over the submitted attempts, nothing late, empty without one); it is not in
the total, since a quiz counts towards it as an item of an assignment (with
that assignment's weight and late policy), never twice.

Every score is written one way (quiz.templatetags.scores): in percent, to
one decimal place at most, half away from zero ("62.5%" on a page, 62.5 in
a CSV column whose header ends in "%"); Canvas's CSV holds points. Sorting
by a column sorts by the figure shown, so two learners shown alike tie (and
fall back to the username).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db.models import QuerySet

from quiz.templatetags.scores import percent_value, points_value
from teaching.assignments.scoring import (
    LearnerScore,
    assignment_scores,
    quiz_scores,
)
from teaching.csv_files import csv_text
from teaching.models import Assignment, Cohort, CohortMembership
from teaching.quizzes.models import Quiz

SORTS = ("learner", "total", "late")  # and "a<id>", "q<id>": an assignment, a quiz


def cohort_assignments(*, cohort: Cohort, archived: bool = False) -> QuerySet:
    qs = Assignment.objects.filter(cohort=cohort).prefetch_related("items")
    return qs.filter(archived_at__isnull=not archived)


def cohort_quizzes(*, cohort: Cohort) -> QuerySet:
    """The cohort's quizzes that are gradebook columns (not archived)."""
    return Quiz.objects.filter(
        cohort=cohort, archived_at__isnull=True
    ).prefetch_related("slots")


def quiz_column(quiz: Quiz) -> str:
    """A quiz's column name in an LMS: its title and id, so names never clash."""
    return f"{quiz.title} [quiz {quiz.pk}]"


def quiz_possible(quiz: Quiz) -> float:
    """A quiz's points possible: its slots' points (each draw shares them)."""
    return sum(slot.points for slot in quiz.slots.all())


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
    # quiz id -> its score (0-1), None without a submitted attempt; no total
    quiz_scores: dict[int, float | None] = field(default_factory=dict)
    cells_with_quizzes: list[tuple[Quiz, float | None]] | None = None

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
    quizzes: list[Quiz] = field(default_factory=list)

    @property
    def counted_quiz_ids(self) -> set[int]:
        """The quizzes an assignment of the gradebook holds: those that count
        in the total, as that assignment's items (the others count nowhere)."""
        return {
            item.quiz_id
            for a in self.assignments
            for item in a.items.all()
            if item.quiz_id
        }

    @property
    def columns(self) -> list[tuple[Assignment | Quiz, str]]:
        """Each assignment, then each quiz, with its sort key."""
        return [(a, f"a{a.pk}") for a in self.assignments] + [
            (q, f"q{q.pk}") for q in self.quizzes
        ]


def cohort_gradebook(*, cohort: Cohort, sort: str = "learner") -> CohortGradebook:
    """Learners x the cohort's assignments, with totals, sorted by `sort`.

    `sort` is "learner", "total" (highest first), "late" (most late first),
    "a<id>" (that assignment's score, highest first) or "q<id>" (that quiz's
    score, highest first, no attempt last); anything else is "learner".
    """
    assignments = list(cohort_assignments(cohort=cohort))
    quizzes = list(cohort_quizzes(cohort=cohort))
    learners = cohort_learners(cohort)
    rows = {
        learner_id: GradebookRow(learner_id, username, {})
        for learner_id, username in learners
    }
    for assignment in assignments:
        for score in assignment_scores(assignment, learners):
            rows[score.learner_id].scores[assignment.pk] = score
    by_quiz = quiz_scores(quizzes, list(rows))
    ordered = list(rows.values())
    for row in ordered:
        row.cells_with_assignments = [(a, row.scores[a.pk]) for a in assignments]
        row.quiz_scores = {q.pk: by_quiz[(row.learner_id, q.pk)] for q in quizzes}
        row.cells_with_quizzes = [(q, row.quiz_scores[q.pk]) for q in quizzes]
    ids = {f"a{a.pk}": a.pk for a in assignments}
    quiz_ids = {f"q{q.pk}": q.pk for q in quizzes}
    if sort == "total":
        ordered.sort(key=lambda r: (-percent(r.total), r.username))
    elif sort == "late":
        ordered.sort(key=lambda r: (-r.late, r.username))
    elif sort in ids:
        ordered.sort(key=lambda r: (-percent(r.scores[ids[sort]].score), r.username))
    elif sort in quiz_ids:

        def by_quiz_score(row: GradebookRow):
            score = row.quiz_scores[quiz_ids[sort]]
            return (score is None, -percent(score or 0.0), row.username)

        ordered.sort(key=by_quiz_score)
    else:
        sort = "learner"
    return CohortGradebook(cohort, assignments, ordered, sort, quizzes)


def percent(score: float) -> float:
    """A score (0-1) in percent as every page and export writes it: one
    decimal place, half away from zero (quiz.templatetags.scores)."""
    return percent_value(score)


def assignment_csv(assignment: Assignment, scores: list[LearnerScore]) -> str:
    items = list(assignment.items.select_related("exercise", "lesson", "quiz"))
    header = ["learner", "due_at", "extended", "late"]
    header += [f"{item.label} (x{item.weight:g}) %" for item in items]
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
                *(percent(by_item[item.pk].score) for item in items),
                round(score.points, 4),
                round(score.possible, 4),
                percent(score.score),
            ]
        )
    return csv_text(header, rows)


def _quiz_percent(score: float | None) -> float | str:
    return "" if score is None else percent(score)


def cohort_csv(book: CohortGradebook) -> str:
    """One row per learner: each assignment's and each quiz's score in percent
    (a quiz's empty without a submitted attempt), then the total's figures."""
    header = ["learner", *(f"{a.title} %" for a in book.assignments)]
    header += [f"{q.title} %" for q in book.quizzes]
    header += ["points", "possible", "total %"]
    rows = [
        [
            row.username,
            *(percent(row.scores[a.pk].score) for a in book.assignments),
            *(_quiz_percent(row.quiz_scores[q.pk]) for q in book.quizzes),
            round(row.points, 4),
            round(row.possible, 4),
            percent(row.total),
        ]
        for row in book.rows
    ]
    return csv_text(header, rows)


# Canvas's gradebook import: its own first columns, then one column per
# assignment (and per quiz) holding points. Canvas matches a row to a student
# by "SIS Login ID" here (the username; "ID", Canvas's own user id, is not
# known to us and left empty), and a column named without "(id)" creates a
# new assignment.
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def canvas_csv(
    *,
    section: str,
    assignments: list[Assignment],
    rows: list[GradebookRow],
    quizzes: Sequence[Quiz] = (),
) -> str:
    """Points per assignment and per quiz in the shape Canvas's gradebook
    import reads. A quiz column holds score x its points possible, empty (no
    grade) without a released score; it is named by its title and id
    ("Quiz 1 [quiz 7]"), so two quizzes of one title stay two columns. A quiz
    an assignment holds counts inside that assignment's column only, as it
    goes to an LMS (one column per quiz)."""
    held = {item.quiz_id for a in assignments for item in a.items.all() if item.quiz_id}
    quizzes = [q for q in quizzes if q.pk not in held]
    header = [*CANVAS_COLUMNS, *(a.title for a in assignments)]
    header += [quiz_column(q) for q in quizzes]
    possible = [sum(item.weight for item in a.items.all()) for a in assignments]
    quiz_points = [quiz_possible(q) for q in quizzes]
    table = [["Points Possible", "", "", "", "", *possible, *quiz_points]]
    for row in rows:
        points = [points_value(row.scores[a.pk].points) for a in assignments]
        for quiz, most in zip(quizzes, quiz_points, strict=True):
            score = row.quiz_scores.get(quiz.pk)
            points.append("" if score is None else points_value(score * most))
        table.append([row.username, "", "", row.username, section, *points])
    return csv_text(header, table)
