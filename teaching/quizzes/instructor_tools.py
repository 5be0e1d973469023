"""Instructor pages around an assessment: close now, reopen for one learner,
review an attempt (and set a question's score), regrade one question for
this quiz only, and search the question bank.

Plain forms that work without JavaScript (a confirmation page before
closing, a dry run before a regrade); every write goes through the same
service the API calls.
"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from quiz.content.models import Lesson, Section
from quiz.core.params import BadNumber, whole_number
from teaching.access import cohort_or_404, instructor_required
from teaching.quizzes import access, attempt_regrade, overrides, picker, services
from teaching.quizzes.instructor_views import form_learner, quiz_form_time
from teaching.quizzes.models import QuizAttempt
from teaching.quizzes.presenting import attempt_state


@instructor_required
@require_http_methods(["GET", "POST"])
def quiz_close(request, quiz_id: int):
    """GET asks to confirm (what closing does, who is answering now); POST closes."""
    quiz = access.quiz_taught(request.user, quiz_id)
    running = QuizAttempt.objects.filter(
        quiz=quiz, preview=False, state=QuizAttempt.State.IN_PROGRESS
    ).count()
    if request.method == "POST":
        try:
            services.quiz_close_now(quiz=quiz, actor=request.user)
        except services.QuizError as exc:
            messages.error(request, f"Not closed: {exc}")
        else:
            messages.success(
                request,
                f"“{quiz.title}” is closed for everyone; {running} running "
                f"attempt{'s' * (running != 1)} submitted.",
            )
        return redirect("instructor-quiz", quiz.pk)
    return render(
        request,
        "teaching/instructor/quiz_close.html",
        {"quiz": quiz, "cohort": quiz.cohort, "running": running},
    )


@instructor_required
@require_POST
def quiz_reopen(request, quiz_id: int):
    quiz = access.quiz_taught(request.user, quiz_id)
    post = request.POST
    try:
        learner = form_learner(post)
        text = post.get("extra_attempts", "1").strip() or "0"
        if not (text.isascii() and text.isdigit()):
            raise services.QuizError(
                "Extra attempts is a whole number.", field="extra_attempts"
            )
        services.quiz_reopen(
            quiz=quiz,
            learner=learner,
            actor=request.user,
            closes_at=quiz_form_time(post, "closes_at"),
            extra_attempts=int(text[:3]),
        )
    except services.QuizError as exc:
        messages.error(request, f"Not reopened ({exc.field}): {exc}")
    else:
        messages.success(request, f"Reopened for {learner.username}.")
    return redirect(f"{reverse('instructor-quiz', args=[quiz.pk])}#reopen-title")


@instructor_required
@require_http_methods(["GET", "POST"])
def attempt_review(request, attempt_id: int):
    """One learner's attempt, every question as they saw it, with the keys;
    POST sets (or clears) one question's score with a comment."""
    attempt = access.attempt_taught(request.user, attempt_id)
    attempt = services.attempt_refresh(attempt)
    errors: dict[str, str] = {}
    status = 200
    if request.method == "POST":
        post = request.POST
        number = post.get("question", "")
        clear = post.get("action") == "clear"
        try:
            try:  # ASCII digits, a bigint at most: int() takes "²", refuses 4,301
                item = whole_number(number, minimum=1)
            except BadNumber:
                item = None
            if item is None:
                raise services.QuizError("Pick a question.", field="question")
            points = None
            if not clear:
                try:
                    points = float(post.get("points", "").strip())
                except ValueError:
                    raise services.QuizError(
                        "Give the points as a number, such as 0.5.", field="points"
                    ) from None
            attempt = overrides.item_override_set(
                attempt=attempt,
                item=item,
                points=points,
                comment=post.get("comment", ""),
                actor=request.user,
            )
        except services.QuizError as exc:
            errors[number] = f"{exc.field}: {exc}"
            status = 400
        else:
            messages.success(request, f"Question {number}'s score saved.")
            url = reverse("instructor-quiz-attempt", args=[attempt.pk])
            return redirect(f"{url}#question-{number}")
    state = attempt_state(attempt, review=True)
    return render(
        request,
        "teaching/instructor/quiz_attempt_review.html",
        {
            "attempt": attempt,
            "quiz": attempt.quiz,
            "cohort": attempt.quiz.cohort,
            "state": state,
            "errors": errors,
            "posted": request.POST if errors else {},
        },
        status=status,
    )


@instructor_required
def quiz_questions(request, quiz_id: int):
    """The quiz's questions, each with its key and any change for this quiz."""
    quiz = access.quiz_taught(request.user, quiz_id)
    return render(
        request,
        "teaching/instructor/quiz_questions.html",
        {
            "quiz": quiz,
            "cohort": quiz.cohort,
            "questions": attempt_regrade.quiz_questions(quiz),
        },
    )


def _change_request(post) -> attempt_regrade.ChangeRequest:
    """The regrade form as a ChangeRequest; numbers left as typed are
    refused by the service with the field named."""

    def number(name):
        text = post.get(name, "").strip()
        if not text:
            return None
        try:
            return float(text)
        except ValueError:
            raise attempt_regrade.ChangeInvalid(
                f"{name}: a number, such as 0.01.", field=name
            ) from None

    return attempt_regrade.ChangeRequest(
        ref=post.get("question", ""),
        action=post.get("action", ""),
        answer=post.get("answer", "").strip(),
        absolute=number("absolute"),
        relative=number("relative"),
        comment=post.get("comment", ""),
    )


@instructor_required
@require_http_methods(["GET", "POST"])
def quiz_question_regrade(request, quiz_id: int):
    """Regrade one question: preview whose scores change, then apply (or undo)."""
    quiz = access.quiz_taught(request.user, quiz_id)
    data = request.POST if request.method == "POST" else request.GET
    questions = {q["ref"]: q for q in attempt_regrade.quiz_questions(quiz)}
    question = questions.get(data.get("question", ""))
    if question is None:
        messages.error(request, "Pick a question of this quiz to regrade.")
        return redirect("instructor-quiz-questions", quiz.pk)
    context = {
        "quiz": quiz,
        "cohort": quiz.cohort,
        "question": question,
        "posted": data,
        "preview": None,
        "error": "",
        "field": "",
    }
    if request.method == "POST":
        step = data.get("step", "preview")
        try:
            if step == "undo":
                regrade = attempt_regrade.question_change_set(
                    quiz=quiz,
                    request=attempt_regrade.ChangeRequest(
                        ref=question["ref"], action=""
                    ),
                    actor=request.user,
                    undo=True,
                )
                return redirect("instructor-quiz-regrade", regrade.pk)
            change = _change_request(data)
            if step == "apply":
                regrade = attempt_regrade.question_change_set(
                    quiz=quiz, request=change, actor=request.user
                )
                return redirect("instructor-quiz-regrade", regrade.pk)
            context["preview"] = attempt_regrade.question_change_preview(
                quiz=quiz, request=change
            )
        except attempt_regrade.ChangeInvalid as exc:
            context.update(error=str(exc), field=exc.field)
            return render(
                request,
                "teaching/instructor/quiz_question_regrade.html",
                context,
                status=400,
            )
    return render(request, "teaching/instructor/quiz_question_regrade.html", context)


@instructor_required
def quiz_bank(request, cohort_id: int):
    """The bank's search as a page: what the builder's picker shows, and its
    slot words to paste without JavaScript."""
    cohort = cohort_or_404(request, cohort_id)
    params = request.GET
    error, results = "", []
    if any(params.get(k) for k in picker.FILTERS):
        try:
            results = picker.bank_search_params(params)
        except picker.SearchInvalid as exc:
            error = str(exc)
    return render(
        request,
        "teaching/instructor/quiz_bank.html",
        {
            "cohort": cohort,
            "params": params,
            "results": results,
            "error": error,
            "lessons": Lesson.objects.select_related("section"),
            "sections": Section.objects.order_by("order"),
            "kinds": picker.KINDS,
            "sources": picker.SOURCES,
            "limit": picker.LIMIT,
        },
        status=400 if error else 200,
    )
