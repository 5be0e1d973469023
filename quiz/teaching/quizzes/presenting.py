"""What a learner may see of an attempt: the only way attempts leave the server.

Pages and the API both build their output here, so the feedback policy is
enforced once: no key, explanation or misconception reaches a browser
before the quiz's policy allows it. Options are identified by their shown
position, never by their stored index (a template's right answer is
stored first).
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from quiz.teaching.quizzes.bank import Bank, is_right
from quiz.teaching.quizzes.code import code_feedback, code_rows, is_code
from quiz.teaching.quizzes.models import Quiz, QuizAttempt
from quiz.teaching.quizzes.policy import feedback_open


def attempt_state(attempt: QuizAttempt, now: datetime | None = None) -> dict:
    """The attempt as its learner sees it now: JSON-ready."""
    now = now or timezone.now()
    quiz = attempt.quiz
    open_ = feedback_open(attempt, now)
    submitted = attempt.state == QuizAttempt.State.SUBMITTED
    immediate = quiz.feedback == Quiz.Feedback.IMMEDIATE and not submitted
    bank = Bank(item["ref"] for item in attempt.items)
    codes = code_rows(attempt)
    grading = False
    questions = []
    for n, item in enumerate(attempt.items, start=1):
        saved = attempt.answers.get(str(n)) or {}
        entry = {
            "number": n,
            "slot": item["slot_number"],
            "points": round(item["points"], 4),
            "answer": saved.get("value"),
            "saved_at": saved.get("saved_at"),
        }
        if not bank.has(item["ref"]):
            entry.update(kind="removed", title="", prompt="(question removed)")
            questions.append(entry)
            continue
        drawn = bank.draw(item["ref"], item["seed"])
        entry.update(kind=drawn.kind, title=drawn.title, prompt=drawn.prompt)
        if is_code(item):
            entry.update(starter=drawn.starter, signature=drawn.signature)
            row = codes.get(n)
            # The grader gets the code only when the policy opens (quizzes.
            # code): with immediate feedback at its check (a save), except in
            # a preview, which is never final and is graded at its submit.
            checked = entry["answer"] is not None and not attempt.preview
            if open_ and (checked or not immediate):
                entry["feedback"] = code_feedback(row, entry["answer"] is not None)
                grading = grading or entry["feedback"]["status"] in (
                    "waiting",
                    "queued",
                    "running",
                )
            questions.append(entry)
            continue
        if drawn.kind == "choice":
            entry["options"] = [
                {"id": shown, "text": drawn.options[stored]}
                for shown, stored in enumerate(item["order"])
            ]
        show = open_ and (not immediate or entry["answer"] not in (None, ""))
        if show:
            value = entry["answer"]
            if drawn.kind == "choice" and isinstance(value, int):
                value = item["order"][value] if value < len(item["order"]) else None
            right = drawn.correct if drawn.kind == "choice" else None
            entry["feedback"] = {
                "correct": is_right(drawn, value),
                "right_answer": drawn.answer_text(),
                "right_option": item["order"].index(right)
                if right is not None
                else None,
                "tolerance": drawn.tolerance_text() if drawn.kind == "numeric" else "",
                "explanation": drawn.explanation,
            }
        questions.append(entry)
    left = max(0.0, (attempt.deadline - now).total_seconds())
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
        "feedback_open": open_ and not immediate,
        "score": None,
        "points": None,
        "possible": round(sum(i["points"] for i in attempt.items), 4),
        "grading": False,
    }
    if submitted and open_:
        # `grading`: some code awaits its verdict; the score counts it as 0.
        state.update(score=attempt.score, points=attempt.points, grading=grading)
    return state
