"""How every figure of the gradebook is computed (docs/gradebook.md says it in prose).

- A learner's due date is the assignment's, or their extension's.
- An attempt is on time when it was *submitted* at or before that moment
  (a grade that finishes after the deadline still counts on time).
- Late attempts keep `lateness_factor` of their credit: all of it (policy
  "none"), none ("no_credit"), or 1 - min(cap, per_day x days late), days
  rounded up ("penalty").
- An exercise item scores its best credit over all graded attempts (the
  checks' score, 0-1, times the factor): a later, worse attempt never lowers
  it, and a late attempt only counts where it beats the on-time best.
- A lesson item scores the share of its self-checks whose first answer was
  right, each first answer weighed by its own lateness.
- A quiz item combines the learner's submitted attempts (previews never
  count) whose scores its feedback policy has released (quizzes.policy:
  a held-back score counts nowhere before its learner may see it) by the
  quiz's own rule, each attempt's score (0-1) first times the
  lateness factor of its `submitted_at`: "best" is the highest score x
  factor, "last" the last attempt's score x its factor, "average" the mean
  of score x factor. No submitted attempt scores 0.
- An instructor's override replaces the item's score.
- The assignment's score is the weighted mean of its items' scores (weights
  are points): points = sum(weight x score), out of sum(weight).
Scores are computed from the rows each time, so a regrade or an override is
in the gradebook at once. `exercise_score` and `lesson_score` are the same
rules for work outside any assignment (no due date, so nothing is late), as
an LMS's own assignment linked to one exercise or lesson scores it;
`quiz_scores` is a quiz's own score (teaching.quizzes.results.combine,
nothing late, None without a submitted attempt), as the gradebook's quiz
columns and an LMS's quiz line item show it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.utils import timezone

from grader.models import Submission
from quiz.content.models import Question
from quiz.learning.models import QuestionAttempt
from quiz.templatetags.scores import percent_text
from teaching.models import (
    Assignment,
    AssignmentExtension,
    AssignmentItem,
    ScoreOverride,
)
from teaching.quizzes.models import Quiz, QuizAttempt
from teaching.quizzes.policy import scores_released
from teaching.quizzes.results import combine

DAY = timedelta(days=1)
Kind = AssignmentItem.Kind
Policy = Assignment.LatePolicy
GRADED = (Submission.Status.PASSED, Submission.Status.FAILED, Submission.Status.ERROR)
NO_DUE_DATE = datetime.max.replace(tzinfo=UTC)  # nothing is late


def days_late(at: datetime, due: datetime) -> int:
    """Whole days late, rounded up: one second late is one day late."""
    if at <= due:
        return 0
    return math.ceil((at - due) / DAY)


def lateness_factor(assignment: Assignment | None, days: int) -> float:
    """The share of its credit an attempt keeps when it is `days` late
    (nothing is late without an assignment)."""
    if days <= 0 or assignment.late_policy == Policy.NONE:
        return 1.0
    if assignment.late_policy == Policy.NO_CREDIT:
        return 0.0
    penalty = min(assignment.penalty_cap, assignment.penalty_per_day * days)
    return max(0.0, 1.0 - penalty)


@dataclass(frozen=True)
class Counted:
    """The attempt (or first answers) an item's score comes from."""

    at: datetime | None
    raw: float  # its own score, before lateness
    days_late: int
    factor: float
    submission_id: str | None = None
    attempt_id: int | None = None  # a quiz attempt (a quiz item's best or last)


@dataclass(frozen=True)
class ItemScore:
    item: AssignmentItem
    score: float  # 0-1: what counts
    attempted: bool
    counted: Counted | None
    override: ScoreOverride | None
    why: str  # for the drill-down

    @property
    def late(self) -> bool:
        return self.override is None and bool(self.counted and self.counted.days_late)


@dataclass(frozen=True)
class LearnerScore:
    learner_id: int
    username: str
    due_at: datetime
    extended: bool
    items: list[ItemScore] = field(default_factory=list)

    @property
    def possible(self) -> float:
        return sum(s.item.weight for s in self.items)

    @property
    def points(self) -> float:
        return sum(s.item.weight * s.score for s in self.items)

    @property
    def score(self) -> float:
        return self.points / self.possible if self.possible else 0.0

    @property
    def late(self) -> bool:
        return any(s.late for s in self.items)


def _best_submission(assignment, due, rows) -> tuple[float, Counted | None]:
    best, counted = 0.0, None
    for row in sorted(rows, key=lambda r: r["created_at"]):
        late = days_late(row["created_at"], due)
        factor = lateness_factor(assignment, late)
        credit = (row["score"] or 0.0) * factor
        if counted is None or credit > best:
            best = credit
            counted = Counted(
                row["created_at"], row["score"] or 0.0, late, factor, str(row["pk"])
            )
    return best, counted


def _exercise_why(counted: Counted | None, due: datetime) -> str:
    if counted is None:
        return "no graded attempt"
    if not counted.days_late:
        return f"best attempt by the due date: {percent_text(counted.raw)}"
    days = f"{counted.days_late} day{'s' * (counted.days_late != 1)}"
    return (
        f"best credit from an attempt {days} late: {percent_text(counted.raw)} "
        f"x {counted.factor:.2f}"
    )


def _lesson_score(assignment, due, questions, firsts) -> tuple[float, Counted, str]:
    """Share of the lesson's self-checks right at the first try, with lateness."""
    credit, right, latest, worst = 0.0, 0, None, (0, 1.0)
    for question_id in questions:
        first = firsts.get(question_id)
        if first is None:
            continue
        late = days_late(first["created_at"], due)
        factor = lateness_factor(assignment, late)
        credit += factor if first["correct"] else 0.0
        right += bool(first["correct"])
        latest = max(latest or first["created_at"], first["created_at"])
        worst = max(worst, (late, factor), key=lambda pair: pair[0])
    total = len(questions)
    score = credit / total if total else 0.0
    answered = sum(1 for q in questions if q in firsts)
    why = f"{right} of {total} self-checks right at the first try"
    if answered < total:
        why += f" ({total - answered} not answered)"
    if worst[0]:
        why += f"; late first answers kept {worst[1]:.2f} of their credit"
    counted = Counted(latest, right / total if total else 0.0, worst[0], worst[1])
    return score, counted, why


def _graded_attempts(user_ids, exercise_ids) -> dict[tuple[int, int], list[dict]]:
    """(learner, exercise) -> their graded submissions."""
    attempts: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for row in Submission.objects.filter(
        user_id__in=user_ids, exercise_id__in=exercise_ids, status__in=GRADED
    ).values("pk", "user_id", "exercise_id", "score", "created_at"):
        attempts[(row["user_id"], row["exercise_id"])].append(row)
    return attempts


def _lesson_questions(lesson_ids) -> dict[int, list[int]]:
    questions: dict[int, list[int]] = defaultdict(list)
    for question_id, lesson_id in Question.objects.filter(
        lesson_id__in=lesson_ids
    ).values_list("pk", "lesson_id"):
        questions[lesson_id].append(question_id)
    return questions


def _first_answers(user_ids, lesson_ids) -> dict[int, dict[int, dict]]:
    """learner -> question -> their first answer to it."""
    firsts: dict[int, dict[int, dict]] = defaultdict(dict)
    for row in (
        QuestionAttempt.objects.filter(
            user_id__in=user_ids, question__lesson_id__in=lesson_ids
        )
        .order_by("created_at", "pk")
        .values("user_id", "question_id", "correct", "created_at")
    ):
        firsts[row["user_id"]].setdefault(row["question_id"], row)
    return firsts


def _submitted_attempts(user_ids, quizzes) -> dict[tuple[int, int], list[dict]]:
    """(learner, quiz) -> their submitted attempts (no previews), in order,
    where the quiz's feedback policy has released their scores."""
    attempts: dict[tuple[int, int], list[dict]] = defaultdict(list)
    quizzes = list({q.pk: q for q in quizzes}.values())
    if not quizzes:
        return attempts
    released = scores_released(quizzes, user_ids, timezone.now())
    for row in (
        QuizAttempt.objects.filter(
            learner_id__in=user_ids,
            quiz_id__in=[q.pk for q in quizzes],
            preview=False,
            state=QuizAttempt.State.SUBMITTED,
        )
        .order_by("number", "pk")
        .values("pk", "learner_id", "quiz_id", "number", "score", "submitted_at")
    ):
        key = (row["learner_id"], row["quiz_id"])
        if key in released:
            attempts[key].append(row)
    return attempts


def _late(days: int) -> str:
    return f"{days} day{'s' * (days != 1)} late"


def _quiz_score(assignment, due, quiz: Quiz, rows) -> tuple[float, Counted | None, str]:
    """The quiz's rule over the learner's attempts, each times its lateness."""
    if not rows:
        return (
            0.0,
            None,
            "no score yet: none submitted, or held until feedback opens",
        )
    graded = []  # (row, its own score, days late, factor)
    for row in rows:
        late = days_late(row["submitted_at"], due)
        graded.append(
            (row, row["score"] or 0.0, late, lateness_factor(assignment, late))
        )
    credits = [raw * factor for _, raw, _, factor in graded]
    score = combine(quiz, credits)
    if quiz.combine == Quiz.Combine.AVERAGE:
        latest = max(row["submitted_at"] for row, *_ in graded)
        days, factor = max(((d, f) for _, _, d, f in graded), key=lambda p: p[0])
        raw = sum(r for _, r, _, _ in graded) / len(graded)
        why = f"average of {len(graded)} attempt{'s' * (len(graded) != 1)}: "
        why += percent_text(score)
        if days:
            why += f"; late attempts kept down to {factor:.2f} of their credit"
        return score, Counted(latest, raw, days, factor), why
    if quiz.combine == Quiz.Combine.LAST:
        index, rule = len(graded) - 1, "last attempt"
    else:  # best: the first attempt with the highest credit
        index, rule = credits.index(max(credits)), "best credit from attempt"
    row, raw, days, factor = graded[index]
    counted = Counted(row["submitted_at"], raw, days, factor, attempt_id=row["pk"])
    if not days:
        why = f"{rule} #{row['number']}, by the due date: {percent_text(raw)}"
    else:
        why = (
            f"{rule} #{row['number']}, {_late(days)}: "
            f"{percent_text(raw)} x {factor:.2f}"
        )
    return score, counted, why


def quiz_scores(
    quizzes: list[Quiz], user_ids: list[int]
) -> dict[tuple[int, int], float | None]:
    """(learner, quiz) -> the quiz's own score (0-1) outside any assignment:
    its rule over the submitted attempts, nothing late; None (not 0) for a
    learner without a submitted attempt. One query for all of them."""
    attempts = _submitted_attempts(user_ids, quizzes)
    return {
        (user_id, quiz.pk): combine(
            quiz, [row["score"] or 0.0 for row in attempts.get((user_id, quiz.pk), [])]
        )
        for quiz in quizzes
        for user_id in user_ids
    }


def exercise_score(user_id: int, exercise_id: int) -> float:
    """An exercise's score (0-1) outside any assignment: the best checks'
    score over all graded attempts, as an assignment item with no due date."""
    rows = _graded_attempts([user_id], [exercise_id]).get((user_id, exercise_id), [])
    return _best_submission(None, NO_DUE_DATE, rows)[0]


def lesson_score(user_id: int, lesson_id: int) -> float:
    """A lesson's score (0-1) outside any assignment: the share of its
    self-checks right at the first try (0 for a lesson without any)."""
    questions = _lesson_questions([lesson_id]).get(lesson_id, [])
    firsts = _first_answers([user_id], [lesson_id]).get(user_id, {})
    return _lesson_score(None, NO_DUE_DATE, questions, firsts)[0]


def assignment_scores(
    assignment: Assignment, learners: list[tuple[int, str]]
) -> list[LearnerScore]:
    """Every item's score for each (id, username) in `learners`, in a few queries."""
    items = list(assignment.items.select_related("exercise", "lesson", "quiz"))
    ids = [learner_id for learner_id, _ in learners]
    extensions = dict(
        AssignmentExtension.objects.filter(
            assignment=assignment, learner_id__in=ids
        ).values_list("learner_id", "due_at")
    )
    overrides = {
        (o.item_id, o.learner_id): o
        for o in ScoreOverride.objects.filter(
            item__assignment=assignment, learner_id__in=ids
        ).select_related("set_by")
    }
    exercise_ids = [i.exercise_id for i in items if i.kind == Kind.EXERCISE]
    attempts = _graded_attempts(ids, exercise_ids)
    lesson_ids = [i.lesson_id for i in items if i.kind == Kind.LESSON]
    questions = _lesson_questions(lesson_ids)
    firsts = _first_answers(ids, lesson_ids)
    quiz_attempts = _submitted_attempts(
        ids, [i.quiz for i in items if i.kind == Kind.QUIZ]
    )

    results = []
    for learner_id, username in learners:
        due = extensions.get(learner_id, assignment.due_at)
        scores = []
        for item in items:
            override = overrides.get((item.pk, learner_id))
            if item.kind == Kind.EXERCISE:
                rows = attempts.get((learner_id, item.exercise_id), [])
                score, counted = _best_submission(assignment, due, rows)
                why = _exercise_why(counted, due)
                attempted = bool(rows)
            elif item.kind == Kind.QUIZ:
                rows = quiz_attempts.get((learner_id, item.quiz_id), [])
                score, counted, why = _quiz_score(assignment, due, item.quiz, rows)
                attempted = bool(rows)
            else:
                lesson_questions = questions.get(item.lesson_id, [])
                mine = firsts.get(learner_id, {})
                score, counted, why = _lesson_score(
                    assignment, due, lesson_questions, mine
                )
                attempted = any(q in mine for q in lesson_questions)
            if override is not None:
                who = override.set_by.username if override.set_by else "an instructor"
                why = (
                    f"set to {percent_text(override.score)} by {who}: {override.reason}"
                )
                score = override.score
            scores.append(ItemScore(item, score, attempted, counted, override, why))
        results.append(
            LearnerScore(learner_id, username, due, learner_id in extensions, scores)
        )
    return results
