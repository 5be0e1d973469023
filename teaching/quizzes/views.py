"""Learner pages for quizzes: a quiz's intro, and taking an attempt.

Plain forms that work without JavaScript; static/js/quiz_attempt.js adds
autosave (through the attempts API), flags saved at once, a countdown and,
on a result with code still being graded, a poll for the verdict on top;
static/vendor/editor.js (CodeMirror) replaces a code question's textarea.
Before submitting, the learner sees a summary (`quiz_attempt_summary`):
answered, unanswered and flagged questions, and Submit. Every write goes
through teaching.quizzes.services, and an attempt reaches the page only
through presenting.attempt_state, which holds back keys, explanations and
scores until the quiz's feedback policy allows them.

A cohort member sees a quiz of their cohort (404 for anyone else, and for an
archived quiz); an instructor of the cohort sees the same page with a
preview instead of a real attempt. An attempt answers only to its learner.
"""

from __future__ import annotations

import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST
from grading_engine.quiz_bank.numbers import EXAMPLE_FORMS

from quiz.core.nul_input import nul_judged_by_view
from quiz.templatetags.scores import percent_number
from teaching.quizzes import access, services
from teaching.quizzes.code import normal_lines
from teaching.quizzes.models import Quiz, QuizAccommodation, QuizAttempt
from teaching.quizzes.policy import attempts_allowed, closing_time
from teaching.quizzes.presenting import attempt_state
from teaching.quizzes.results import combine

EDITOR_JS = "vendor/editor.js"  # CodeMirror, built by scripts/build_assets.sh
ANSWER_MAX_CHARS = 200  # a number or an option id; anything longer is cut
NUMBER_FORMS = EXAMPLE_FORMS  # how numbers may be written: no question's key

FEEDBACK_WORDS = {
    Quiz.Feedback.IMMEDIATE: (
        "Check each answer as you go: you see at once whether it is right, the "
        "right answer and its explanation, and a checked answer is final."
    ),
    Quiz.Feedback.AFTER_SUBMIT: (
        "Your score, the right answers and their explanations appear once you "
        "have submitted your last attempt, or the quiz has closed for you."
    ),
    Quiz.Feedback.AFTER_CLOSE: (
        "Your score, the right answers and their explanations appear once the "
        "quiz has closed for everyone."
    ),
}
# Where a held-back result says when it opens: never a date, since the
# last close may be one learner's accommodation (private).
HELD_WORDS = {
    Quiz.Feedback.AFTER_SUBMIT: (
        "Your score and the right answers appear once you have submitted your "
        "last attempt, or the quiz has closed for you."
    ),
    Quiz.Feedback.AFTER_CLOSE: (
        "Your score and the right answers appear once the quiz has closed for everyone."
    ),
}


# Words -----------------------------------------------------------------------


def duration_text(seconds: float) -> str:
    """29 min 05 s, 1 h 04 min, 2 d 3 h: what static/js/quiz_attempt.js shows too."""
    total = max(0, math.ceil(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s"


def _minutes_text(minutes: float) -> str:
    value = f"{minutes:.1f}".removesuffix(".0")
    return f"{value} minute{'' if value == '1' else 's'}"


# The intro page --------------------------------------------------------------


@login_required
def quiz_intro(request, quiz_id: int):
    quiz, teaches = access.quiz_seen(request.user, quiz_id)
    user = request.user
    now = timezone.now()
    services.close_expired(quiz=quiz, learner=user, now=now)
    accommodation = QuizAccommodation.objects.filter(quiz=quiz, learner=user).first()
    closes_at = closing_time(quiz, accommodation)
    allowed = (
        quiz.attempts_allowed if teaches else attempts_allowed(quiz, accommodation)
    )
    factor = accommodation.time_factor if accommodation else 1.0
    attempts = list(
        QuizAttempt.objects.filter(quiz=quiz, learner=user, preview=teaches)
        .select_related("quiz")
        .order_by("number")
    )
    rows = []
    for attempt in attempts:
        state = attempt_state(attempt, now)
        rows.append({"attempt": attempt, "state": state, **_score_words(state)})
    current = next(
        (a for a in attempts if a.state == QuizAttempt.State.IN_PROGRESS), None
    )
    used = len(attempts)
    if now < quiz.opens_at:
        phase = "upcoming"
    elif now >= closes_at:
        phase = "closed"
    else:
        phase = "open"
    refusal = ""
    if not teaches and current is None:
        if phase == "upcoming":
            refusal = "This quiz has not opened yet."
        elif phase == "closed":
            refusal = "This quiz has closed."
        elif used >= allowed:
            refusal = f"You have used all {allowed} attempt(s)."
    submitted = [r for r in rows if r["attempt"].state == QuizAttempt.State.SUBMITTED]
    overall = None
    if (
        not teaches
        and submitted
        and all(r["state"]["score"] is not None for r in submitted)
    ):
        overall = combine(quiz, [r["state"]["score"] for r in submitted])
    limit = None
    if quiz.time_limit:
        limit = _minutes_text(quiz.time_limit * factor)
    context = {
        "quiz": quiz,
        "teaches": teaches,
        "phase": phase,
        "closes_at": closes_at,
        "extended_close": closes_at != quiz.closes_at,
        "time_limit": limit,
        "time_factor": factor if factor != 1.0 else None,
        "used": used,
        "allowed": allowed,
        "left": max(0, allowed - used),
        "rows": rows,
        "current": current,
        "refusal": refusal,
        "overall": overall,  # 0-1; the page writes it with |percent
        "feedback_words": FEEDBACK_WORDS[quiz.feedback],
        "held_words": HELD_WORDS.get(quiz.feedback, ""),
    }
    return render(request, "teaching/quiz_intro.html", context)


def _score_words(state: dict) -> dict:
    """The score as a learner may see it now (None while it is held back):
    `percent` is the number the `percent` filter writes, without its sign
    ("62.5"; quiz.templatetags.scores), so every page shows one figure."""
    if state["score"] is None:
        return {"percent": None}
    return {"percent": percent_number(state["score"])}


@login_required
@require_POST
def quiz_start(request, quiz_id: int):
    quiz, teaches = access.quiz_seen(request.user, quiz_id)
    try:
        attempt, _created = services.attempt_start(
            quiz=quiz,
            learner=request.user,
            preview=teaches,
            restart=teaches and bool(request.POST.get("restart")),
        )
    except services.AttemptRefused as exc:
        messages.error(request, f"The attempt could not start: {exc}")
        return redirect("quiz", quiz_id=quiz.pk)
    return redirect("quiz-attempt", attempt_id=attempt.pk)


# The attempt page ------------------------------------------------------------


def _saved_text(value) -> str:
    return "" if value is None else str(value)


def _locked(attempt: QuizAttempt, question: dict) -> bool:
    """With immediate feedback a checked answer is final (services enforces it)."""
    return (
        attempt.quiz.feedback == Quiz.Feedback.IMMEDIATE
        and not attempt.preview
        and question["answer"] is not None
    )


def _points(fraction, points: float):
    """A share of a question's points, in points (None stays None)."""
    if fraction is None:
        return None
    return round(fraction * points, 4)


def _rows(attempt: QuizAttempt, state: dict, errors: dict, drafts: dict) -> list:
    in_progress = state["state"] == QuizAttempt.State.IN_PROGRESS
    rows = []
    for q in state["questions"]:
        key = str(q["number"])
        saved = _saved_text(q["answer"])
        value = drafts.get(key, saved)
        editable = in_progress and q["kind"] != "removed" and not _locked(attempt, q)
        chosen = None
        if q["kind"] == "choice" and value.strip().isdigit() and value.isascii():
            chosen = int(value)
        feedback = q.get("feedback")
        override = (feedback or {}).get("override")
        rows.append(
            {
                "q": q,
                "key": key,
                "value": value,
                "saved": saved,
                "chosen": chosen,
                "editable": editable,
                "unsaved": value != saved,
                "error": errors.get(key, ""),
                "feedback": feedback,
                "answered": q["answer"] not in (None, ""),
                "flagged": q["flagged"],
                "flaggable": in_progress and q["kind"] != "removed",
                "earned": _points((feedback or {}).get("score"), q["points"]),
                "override_points": _points(
                    override["score"] if override else None, q["points"]
                ),
            }
        )
    return rows


def _attempt_page(request, attempt, *, errors=None, drafts=None, status=200):
    now = timezone.now()
    state = attempt_state(attempt, now)
    quiz = attempt.quiz
    in_progress = state["state"] == QuizAttempt.State.IN_PROGRESS
    rows = _rows(attempt, state, errors or {}, drafts or {})
    context = {
        "attempt": attempt,
        "quiz": quiz,
        "state": state,
        "in_progress": in_progress,
        "immediate": quiz.feedback == Quiz.Feedback.IMMEDIATE,
        "rows": rows,
        "time_left": duration_text(state["time_left_seconds"]),
        "number_forms": NUMBER_FORMS,
        "api_url": reverse("api-quiz-attempt", args=[attempt.pk]),
        "percent": _score_words(state)["percent"],
        "held_words": HELD_WORDS.get(quiz.feedback, ""),
        # Without a built bundle a code question keeps the plain textarea.
        "editor_js": in_progress
        and any(r["editable"] and r["q"]["kind"] == "code" for r in rows)
        and finders.find(EDITOR_JS) is not None,
    }
    return render(request, "teaching/quiz_attempt.html", context, status=status)


@nul_judged_by_view  # a code answer's NUL: the page says so, code kept
@login_required
@require_http_methods(["GET", "POST"])
def quiz_attempt(request, attempt_id: int):
    attempt = access.attempt_own(request.user, attempt_id)
    if request.method == "POST":
        return _attempt_post(request, attempt)
    return _attempt_page(request, services.attempt_refresh(attempt))


def _posted(request, state: dict) -> dict[str, str]:
    """The answers the form sent, by question number (missing: not sent).

    Code is never cut (the service refuses code that is too big, saying so);
    code still equal to the starter reads as no answer.
    """
    posted = {}
    for q in state["questions"]:
        name = f"q-{q['number']}"
        if name not in request.POST:
            continue
        value = request.POST[name]
        if q["kind"] != "code":
            value = value[:ANSWER_MAX_CHARS]
        else:  # the service reads the starter as no answer too (an API save)
            value = normal_lines(value)
            if value.strip() == normal_lines(q.get("starter", "")).strip():
                value = ""
        posted[str(q["number"])] = value
    return posted


def _posted_flags(request, state: dict) -> list[int] | None:
    """The questions the form flags for review; None if it carries no flags.

    The attempt form says it carries them (`flags-shown`), so a post without
    the checkboxes (the summary's Submit) leaves the flags as they are.
    """
    if "flags-shown" not in request.POST:
        return None
    count = len(state["questions"])
    numbers = set()
    for value in request.POST.getlist("flag")[:count]:
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) <= 6:
            if 1 <= int(text) <= count:
                numbers.add(int(text))
    return sorted(numbers)


def _numbers_text(numbers) -> str:
    ordered = sorted(numbers, key=int)
    if len(ordered) == 1:
        return f"question {ordered[0]}"
    return "questions " + ", ".join(ordered[:-1]) + " and " + ordered[-1]


def _attempt_post(request, attempt: QuizAttempt):
    """Save (or check one answer), then submit or review if asked; PRG unless
    errors.

    Only answers (and flags) that differ from the saved ones are sent to the
    service, so an unchanged form submitted at the deadline does not read as
    a late answer. `action`: save, review (save, then the summary page),
    submit, or enter (Enter in a field with immediate feedback: nothing).
    """
    now = timezone.now()
    state = attempt_state(attempt, now)
    saved = {str(q["number"]): _saved_text(q["answer"]) for q in state["questions"]}
    posted = _posted(request, state)
    changed = {n: v for n, v in posted.items() if v.strip() != saved[n].strip()}
    flags = _posted_flags(request, state)
    if flags == state["flags"]:
        flags = None  # unchanged: nothing to save
    action = request.POST.get("action", "save")
    submit = action == "submit"
    review = action == "review"
    check = request.POST.get("check", "")
    url = reverse("quiz-attempt", args=[attempt.pk])
    errors: dict[str, str] = {}
    drafts: dict[str, str] = {}
    if check:
        if check not in saved:
            messages.error(request, "That question is not part of this attempt.")
            return redirect(url)
        drafts = {n: v for n, v in changed.items() if n != check}
        value = posted.get(check, "")
        if not value.strip():
            errors[check] = f"Question {check}: answer it before checking."
            return _attempt_page(
                request, attempt, errors=errors, drafts=drafts, status=400
            )
        answers = {check: value} if check in changed else {}
    elif attempt.quiz.feedback == Quiz.Feedback.IMMEDIATE and not submit:
        if not review:
            # Enter pressed in a field: with immediate feedback a save is
            # final, so nothing is saved without the question's own Check.
            messages.info(
                request,
                "Nothing was saved: press Check under a question to save and "
                "check that answer.",
            )
            return _attempt_page(request, attempt, drafts=changed)
        answers = {}  # the summary: flags only, an answer needs its Check
        if changed:
            messages.warning(
                request,
                f"Not saved: what you typed in {_numbers_text(changed)}. With "
                "immediate feedback an answer is saved only by its Check button: "
                "go back to the question to check it.",
            )
    else:
        answers = changed
    try:
        if answers or flags is not None:
            result = services.attempt_save(
                attempt=attempt, answers=answers, flags=flags, now=now
            )
            errors = result.errors
            if result.saved and not submit:
                count = len(result.saved)
                done = "Checked" if check else "Saved"
                messages.success(
                    request,
                    f"{done} {count} answer{'' if count == 1 else 's'} at "
                    f"{now:%H:%M:%S} UTC.",
                )
            elif flags is not None and not (submit or review or check):
                messages.success(
                    request, f"Saved your flags for review at {now:%H:%M:%S} UTC."
                )
        elif now >= attempt.deadline and attempt.state == QuizAttempt.State.IN_PROGRESS:
            services.close_expired(quiz=attempt.quiz, learner=request.user, now=now)
            raise services.AttemptClosed(
                "Time is up: your attempt was submitted with the answers saved "
                "before the deadline."
            )
        elif action == "save" and not check:
            messages.info(request, "Nothing had changed since your last save.")
        if submit and not errors:
            services.attempt_submit(attempt=attempt, by="learner", now=now)
            messages.success(request, "Your attempt was submitted.")
    except services.AttemptClosed as exc:
        messages.warning(request, str(exc))
        return redirect(url)
    if errors:
        if submit:
            messages.error(
                request,
                "Not submitted yet: fix or clear the answers marked below, then "
                "submit again.",
            )
        elif review:
            messages.error(
                request,
                "Fix or clear the answers marked below, then review your answers "
                "again.",
            )
        bad = {n: posted.get(n, "") for n in errors if n in posted}
        attempt.refresh_from_db()
        return _attempt_page(
            request, attempt, errors=errors, drafts={**drafts, **bad}, status=400
        )
    if drafts:  # a check with other answers typed but not checked: keep them
        attempt.refresh_from_db()
        return _attempt_page(request, attempt, drafts=drafts)
    if review:
        return redirect("quiz-attempt-summary", attempt_id=attempt.pk)
    return redirect(f"{url}#question-{check}" if check else url)


# The summary before submitting -----------------------------------------------


def _answer_words(q: dict) -> str:
    """A saved answer in a few words, for the summary ("" if none)."""
    value = q["answer"]
    if value in (None, ""):
        return ""
    if q["kind"] == "choice":
        shown = {o["id"]: o["text"] for o in q.get("options", [])}
        return shown.get(value, "")
    if q["kind"] == "code":
        lines = len(str(value).strip().splitlines())
        return f"{lines} line{'' if lines == 1 else 's'} of code"
    return str(value)


@login_required
@require_http_methods(["GET", "HEAD"])
def quiz_attempt_summary(request, attempt_id: int):
    """Before submitting: each question answered or not, and flagged or not,
    with a link back to it; Submit from here."""
    attempt = services.attempt_refresh(access.attempt_own(request.user, attempt_id))
    if attempt.state != QuizAttempt.State.IN_PROGRESS:
        return redirect("quiz-attempt", attempt_id=attempt.pk)
    state = attempt_state(attempt, timezone.now())
    rows = [
        {
            "q": q,
            "key": str(q["number"]),
            "answered": q["answer"] not in (None, ""),
            "flagged": q["flagged"],
            "words": _answer_words(q),
        }
        for q in state["questions"]
        if q["kind"] != "removed"
    ]
    context = {
        "attempt": attempt,
        "quiz": attempt.quiz,
        "state": state,
        "rows": rows,
        "unanswered": [r for r in rows if not r["answered"]],
        "flagged": [r for r in rows if r["flagged"]],
        "answered_count": sum(r["answered"] for r in rows),
        "time_left": duration_text(state["time_left_seconds"]),
        "immediate": attempt.quiz.feedback == Quiz.Feedback.IMMEDIATE,
    }
    return render(request, "teaching/quiz_attempt_summary.html", context)
