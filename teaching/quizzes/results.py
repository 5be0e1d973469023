"""A quiz's scores: each learner's attempts, combined by the quiz's rule.

The gradebook, the results API and its CSV read the same function, so a
learner's quiz score is one number everywhere.
"""

from __future__ import annotations

from quiz.templatetags.scores import percent_value
from teaching.csv_files import csv_response, csv_text, export_filename
from teaching.models import CohortMembership
from teaching.quizzes.models import Quiz, QuizAttempt


def combine(quiz: Quiz, scores: list[float]) -> float | None:
    """The learner's quiz score from their submitted attempts' scores, in order."""
    if not scores:
        return None
    if quiz.combine == Quiz.Combine.LAST:
        return scores[-1]
    if quiz.combine == Quiz.Combine.AVERAGE:
        return sum(scores) / len(scores)
    return max(scores)


def quiz_results(quiz: Quiz) -> list[dict]:
    """One row per cohort member: their attempts and their combined score."""
    members = (
        CohortMembership.objects.filter(cohort=quiz.cohort)
        .select_related("user")
        .order_by("user__username")
    )
    attempts: dict[int, list[QuizAttempt]] = {}
    for attempt in QuizAttempt.objects.filter(quiz=quiz, preview=False).order_by(
        "number"
    ):
        attempts.setdefault(attempt.learner_id, []).append(attempt)
    rows = []
    for member in members:
        mine = attempts.get(member.user_id, [])
        submitted = [a for a in mine if a.state == QuizAttempt.State.SUBMITTED]
        rows.append(
            {
                "learner_id": member.user_id,
                "learner": member.user.username,
                "score": combine(quiz, [a.score or 0.0 for a in submitted]),
                "attempts": [
                    {
                        "id": a.pk,
                        "number": a.number,
                        "state": a.state,
                        "started_at": a.started_at,
                        "deadline": a.deadline,
                        "submitted_at": a.submitted_at,
                        "submitted_by": a.submitted_by,
                        "points": a.points,
                        "possible": a.possible,
                        "score": a.score,
                        "seed": a.seed,
                    }
                    for a in mine
                ],
            }
        )
    return rows


def results_csv(quiz: Quiz, rows: list[dict]):
    """The results as CSV: one line per learner, the counted score (0-1, and
    in percent as the pages show it) and attempts."""
    # `score` is 0-1, as the JSON's; `score %` the figure every page shows.
    header = ["learner_id", "learner", "score", "attempts", "last_submitted_at"]
    header.append("score %")
    lines = []
    for row in rows:
        done = [a for a in row["attempts"] if a["submitted_at"]]
        lines.append(
            [
                row["learner_id"],
                row["learner"],
                "" if row["score"] is None else f"{row['score']:.4f}",
                len(row["attempts"]),
                done[-1]["submitted_at"].isoformat() if done else "",
                "" if row["score"] is None else percent_value(row["score"]),
            ]
        )
    return csv_response(
        text=csv_text(header, lines),
        filename=export_filename(quiz.cohort, f"quiz-{quiz.pk}"),
    )
