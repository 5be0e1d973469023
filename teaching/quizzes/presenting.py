"""What a learner may see of an attempt: the only way attempts leave the server.

Pages and the API both build their output here, so the feedback policy
(policy.py) is enforced once: no score, key, explanation, verdict or
mistake reaches a browser before the quiz's policy allows it. Options are
identified by their shown position, never by their stored index (a
template's right answer is stored first). `attempt_review` is the same
attempt for its instructor: everything, at any time.
"""

from __future__ import annotations

from datetime import datetime

from django.urls import reverse
from django.utils import timezone

from quiz.content.models import Diagnosis
from quiz.templatetags.scores import percent_value
from teaching.quizzes.bank import Bank, Drawn, is_right, matches_wrong
from teaching.quizzes.changes import change_words, changed, quiz_changes
from teaching.quizzes.code import code_feedback, code_rows, is_code
from teaching.quizzes.models import Quiz, QuizAttempt, QuizQuestionChange
from teaching.quizzes.policy import feedback_open
from teaching.quizzes.scoring import attempt_overrides

Change = QuizQuestionChange.Action


def _mistakes(slugs: set[str]) -> dict[str, dict]:
    """Each named mistake's summary and the lessons that teach it, one query."""
    if not slugs:
        return {}
    rows = Diagnosis.objects.filter(slug__in=slugs).prefetch_related("lessons")
    return {
        d.slug: {
            "diagnosis": d.slug,
            "summary": d.summary,
            "lessons": [
                {
                    "slug": lesson.slug,
                    "title": lesson.title,
                    "url": lesson.get_absolute_url(),
                }
                for lesson in d.lessons.all()
            ],
        }
        for d in rows
    }


def _choice_feedback(drawn: Drawn, item: dict, value) -> tuple[dict, str | None]:
    """A choice or numeric answer's verdict, key and explanation; its mistake."""
    stored = value
    if drawn.kind == "choice" and isinstance(value, int):
        stored = item["order"][value] if value < len(item["order"]) else None
    right = drawn.correct if drawn.kind == "choice" else None
    wrong = matches_wrong(drawn, stored)
    feedback = {
        "correct": is_right(drawn, stored),
        "right_answer": drawn.answer_text(),
        "right_option": item["order"].index(right) if right is not None else None,
        "tolerance": drawn.tolerance_text() if drawn.kind == "numeric" else "",
        "explanation": drawn.explanation,
    }
    if wrong is not None:
        feedback["mistake"] = {"says": wrong.says, "diagnosis": wrong.diagnosis}
    return feedback, wrong.diagnosis if wrong else None


def _code_mistake(feedback: dict) -> str | None:
    failed = next((c for c in feedback["checks"] if not c["passed"]), None)
    if failed and failed.get("diagnosis"):
        feedback["mistake"] = {
            "says": failed["message"],
            "diagnosis": failed["diagnosis"],
        }
        return failed["diagnosis"]
    return None


def attempt_state(
    attempt: QuizAttempt, now: datetime | None = None, *, review: bool = False
) -> dict:
    """The attempt as its learner sees it now: JSON-ready.

    `review` (an instructor's review) shows everything whatever the policy.
    """
    now = now or timezone.now()
    quiz = attempt.quiz
    open_ = review or feedback_open(attempt, now)
    submitted = attempt.state == QuizAttempt.State.SUBMITTED
    immediate = quiz.feedback == Quiz.Feedback.IMMEDIATE and not submitted
    bank = Bank(item["ref"] for item in attempt.items)
    codes = code_rows(attempt)
    changes = quiz_changes(quiz.pk)
    overrides = attempt_overrides(attempt) if open_ else {}
    flags = set(attempt.flags or [])
    grading = False
    named: set[str] = set()
    questions = []
    for n, item in enumerate(attempt.items, start=1):
        saved = attempt.answers.get(str(n)) or {}
        entry = {
            "number": n,
            "slot": item["slot_number"],
            "points": round(item["points"], 4),
            "answer": saved.get("value"),
            "saved_at": saved.get("saved_at"),
            "flagged": n in flags,
        }
        if not bank.has(item["ref"]):
            entry.update(kind="removed", title="", prompt="(question removed)")
            questions.append(entry)
            continue
        change = changes.get(item["ref"])
        drawn = changed(bank.draw(item["ref"], item["seed"]), change)
        entry.update(kind=drawn.kind, title=drawn.title, prompt=drawn.prompt)
        if review:
            entry["ref"] = item["ref"]
        answered = entry["answer"] not in (None, "")
        if is_code(item):
            entry.update(starter=drawn.starter, signature=drawn.signature)
            # The grader gets the code only when the policy opens (quizzes.
            # code): with immediate feedback at its check (a save), except in
            # a preview, which is never final and is graded at its submit.
            checked = answered and not attempt.preview
            if open_ and (checked or not immediate):
                entry["feedback"] = code_feedback(codes.get(n), answered)
                grading = grading or entry["feedback"]["status"] in (
                    "waiting",
                    "queued",
                    "running",
                )
                named.add(_code_mistake(entry["feedback"]))
        else:
            if drawn.kind == "choice":
                entry["options"] = [
                    {"id": shown, "text": drawn.options[stored]}
                    for shown, stored in enumerate(item["order"])
                ]
            if open_ and (not immediate or answered):
                entry["feedback"], slug = _choice_feedback(drawn, item, entry["answer"])
                named.add(slug)
        if "feedback" in entry and (submitted or review):
            fraction = attempt.results[n - 1] if n <= len(attempt.results) else None
            entry["feedback"]["score"] = fraction
            entry["feedback"]["counted"] = (
                change is None or change.action != Change.DROP
            )
            words = change_words(change, drawn)
            if words:
                entry["feedback"]["regraded"] = words
            if n in overrides:
                entry["feedback"]["override"] = {
                    "score": overrides[n].fraction,
                    "comment": overrides[n].comment,
                }
        questions.append(entry)
    mistakes = _mistakes(named - {None})
    for entry in questions:
        mistake = (entry.get("feedback") or {}).get("mistake")
        if mistake:
            mistake.update(
                {k: v for k, v in mistakes.get(mistake["diagnosis"], {}).items()}
            )
    left = max(0.0, (attempt.deadline - now).total_seconds())
    possible = attempt.possible if submitted and attempt.possible is not None else None
    if possible is None:
        possible = sum(
            i["points"]
            for i in attempt.items
            if (
                changes.get(i["ref"]) is None or changes[i["ref"]].action != Change.DROP
            )
        )
    state = {
        "id": attempt.pk,
        "quiz": {"id": quiz.pk, "title": quiz.title, "feedback": quiz.feedback},
        "number": attempt.number,
        "preview": attempt.preview,
        "state": attempt.state,
        "started_at": attempt.started_at,
        "deadline": attempt.deadline,
        "server_time": now,
        "time_left_seconds": 0.0 if submitted else round(left, 1),
        "submitted_at": attempt.submitted_at,
        "submitted_by": attempt.submitted_by,
        "questions": questions,
        "flags": sorted(flags),
        "answered": sum(q["answer"] not in (None, "") for q in questions),
        "feedback_open": open_ and not immediate,
        "score": None,
        "points": None,
        "percent": None,
        "possible": round(possible, 4),
        "grading": False,
        "results_url": reverse("quiz-attempt", args=[attempt.pk]),
    }
    if submitted and open_:
        # `grading`: some code awaits its verdict; the score counts it as 0.
        state.update(
            score=attempt.score,
            points=attempt.points,
            percent=percent_value(attempt.score),
            grading=grading,
        )
    return state
