"""Learner pages: home, the lesson page and answering on it, review, progress.

Every form works as a plain POST/redirect/GET; when JavaScript sends it with
`Accept: application/json` the same view answers with JSON (a 400 with an
`error` for bad input) so the page updates in place.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.contrib.staticfiles import finders
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.formats import date_format
from django.views.decorators.http import require_GET, require_POST

from quiz.content.models import Lesson
from quiz.content.selectors import lesson_get, section_list
from quiz.core.exam_mode import ExamLocked, exam_lock
from quiz.core.params import BadNumber, whole_number
from quiz.learning import data_export, progress, review
from quiz.learning.exercise_progress import exercise_progress
from quiz.learning.models import ReviewCard
from quiz.learning.panels import home_panels, progress_panels

CHART_JS = "vendor/chart.umd.js"
DUE_FORMAT = "j M Y, H:i T"  # the templates use the same format


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _when(moment) -> str:
    return date_format(timezone.localtime(moment), DUE_FORMAT)


def _lesson_or_404(slug: str) -> Lesson:
    try:
        return lesson_get(slug=slug)
    except Lesson.DoesNotExist:
        raise Http404("No such lesson.") from None


def home(request):
    view = progress.home_progress(user=request.user, sections=section_list())
    panels = home_panels(user=request.user)
    return render(request, "quiz/home.html", {"home": view, "panels": panels})


def lesson_detail(request, slug: str):
    lesson = _lesson_or_404(slug)
    errors, posted = {}, {}
    if request.user.is_authenticated:
        progress.lesson_read_record(user=request.user, lesson=lesson)
        errors, posted = progress.pending_answer_judge(
            session=request.session, user=request.user, lesson=lesson
        )
    return lesson_page(
        request,
        lesson,
        status=400 if errors else 200,
        errors=errors,
        posted=posted,
    )


def lesson_page(
    request,
    lesson: Lesson,
    *,
    status: int = 200,
    errors: dict[int, str] | None = None,
    posted: dict[int, dict] | None = None,
    page_error: str = "",
):
    """Render a lesson with the learner's cards and any answer feedback."""
    user = request.user
    cards = progress.lesson_cards(user=user, lesson=lesson)
    try:
        whole_number(request.GET.get("checked"), minimum=1)
    except BadNumber:
        # A mangled link ("?checked=²", an id past bigint): still the page.
        status = 400
        page_error = page_error or "That link is broken: ?checked= names no answer."
    # The learner's latest answers stay on the page after a reload (the
    # ?checked= of a no-JS answer names the latest one, so it shows too).
    latest = progress.latest_attempts(user=user, lesson=lesson)
    rated = request.GET.get("rated", "")
    errors = errors or {}
    posted = posted or {}
    lock = exam_lock(user)
    locked = lock.questions if lock else frozenset()
    follow_ups = [
        {"obj": f, "card": cards.get(f.pk), "open": str(f.pk) == rated}
        for f in lesson.follow_ups.all()
    ]
    questions = [
        {
            "obj": q,
            "attempt": None if q.pk in errors or q.pk in locked else latest.get(q.pk),
            "error": errors.get(q.pk, ""),
            "posted": {}
            if q.pk in locked
            else posted.get(q.pk) or progress.answer_fields(latest.get(q.pk)),
            # Exam mode: its verdict would be a key of the quiz being sat.
            "locked": lock.message("This self-check") if q.pk in locked else "",
        }
        for q in lesson.questions.all()
    ]
    plugged = exercise_progress()
    lister = plugged.lesson_exercises if plugged else None
    return render(
        request,
        "quiz/lesson.html",
        {
            "lesson": lesson,
            "exercises": lister(lesson=lesson) if lister else [],
            "follow_ups": follow_ups,
            "questions": questions,
            "ratings": review.RATINGS,
            "page_error": page_error,
        },
        status=status,
    )


def _json_error(message: str, status: int = 400) -> JsonResponse:
    return JsonResponse({"error": message}, status=status)


@require_POST
def question_answer(request, slug: str, question_id: int):
    """Judge a self-check answer; feedback inline (fetch) or on the lesson page."""
    lesson = _lesson_or_404(slug)
    anchor = f"{lesson.get_absolute_url()}#q-{question_id}"
    if not request.user.is_authenticated:
        if _wants_json(request):
            return _json_error("Log in to answer.", status=401)
        progress.pending_answer_keep(
            session=request.session,
            lesson=lesson,
            question_id=question_id,
            data=request.POST,
        )
        return redirect_to_login(anchor)
    question = next((q for q in lesson.questions.all() if q.pk == question_id), None)
    if question is None:
        message = "That question is not part of this lesson; reload the page."
        if _wants_json(request):
            return _json_error(message)
        return lesson_page(request, lesson, status=400, page_error=message)
    try:
        attempt = progress.question_attempt_create(
            user=request.user, question=question, data=request.POST
        )
    except ExamLocked as exc:
        if _wants_json(request):
            return _json_error(str(exc), status=403)
        return lesson_page(request, lesson, status=403, page_error=str(exc))
    except progress.AnswerInvalid as exc:
        if _wants_json(request):
            return _json_error(str(exc))
        return lesson_page(
            request,
            lesson,
            status=400,
            errors={question.pk: str(exc)},
            posted={question.pk: request.POST.dict()},
        )
    if _wants_json(request):
        html = render_to_string(
            "quiz/_question_feedback.html",
            {"question": question, "attempt": attempt},
            request=request,
        )
        return JsonResponse(
            {
                "correct": attempt.correct,
                "html": html,
                "due_count": review.cards_due_count(user=request.user),
            }
        )
    return redirect(f"{lesson.get_absolute_url()}?checked={attempt.pk}#q-{question.pk}")


def _rated_payload(request, card: ReviewCard, label: str) -> dict:
    return {
        "due": card.due.isoformat(),
        "due_display": _when(card.due),
        "due_count": review.cards_due_count(user=request.user),
        "message": f"Next review of {label}: {_when(card.due)}.",
    }


@require_POST
def follow_up_rate(request, slug: str, follow_up_id: int):
    """Rate a revealed follow-up Again/Hard/Good/Easy; FSRS picks the next date."""
    lesson = _lesson_or_404(slug)
    anchor = f"{lesson.get_absolute_url()}#f-{follow_up_id}"
    if not request.user.is_authenticated:
        if _wants_json(request):
            return _json_error("Log in to rate follow-ups.", status=401)
        return redirect_to_login(anchor)
    follow_up = next((f for f in lesson.follow_ups.all() if f.pk == follow_up_id), None)
    try:
        if follow_up is None:
            raise review.RatingInvalid(
                "That follow-up is not part of this lesson; reload the page."
            )
        rating = review.rating_parse(request.POST.get("rating"))
    except review.RatingInvalid as exc:
        if _wants_json(request):
            return _json_error(str(exc))
        return lesson_page(request, lesson, status=400, page_error=str(exc))
    card = review.follow_up_rate(user=request.user, follow_up=follow_up, rating=rating)
    if _wants_json(request):
        return JsonResponse(_rated_payload(request, card, "this follow-up"))
    return redirect(
        f"{lesson.get_absolute_url()}?rated={follow_up.pk}#f-{follow_up.pk}"
    )


@login_required
@require_GET
def review_page(request):
    """The learner's due cards: reveal the answer, then rate it."""
    return _review_render(request)


def _review_render(request, *, status: int = 200, error: str = ""):
    lock = exam_lock(request.user)
    cards = [
        card
        for card in review.cards_due(user=request.user)
        if not (lock and card.question_id in lock.questions)
    ]
    next_due = None if cards else review.card_next_due(user=request.user)
    return render(
        request,
        "quiz/review.html",
        {
            "cards": cards,
            "next_due": next_due,
            "ratings": review.RATINGS,
            "error": error,
            "exercise_reason": ReviewCard.Reason.EXERCISE,
        },
        status=status,
    )


@login_required
@require_POST
def review_rate(request, card_id: int):
    try:
        card = review.card_get(user=request.user, card_id=card_id)
    except ReviewCard.DoesNotExist:
        raise Http404("No such review card.") from None
    lock = exam_lock(request.user)
    if lock and card.question_id in lock.questions:
        message = lock.message("This review card")
        if _wants_json(request):
            return _json_error(message, status=403)
        return _review_render(request, status=403, error=message)
    try:
        rating = review.rating_parse(request.POST.get("rating"))
    except review.RatingInvalid as exc:
        if _wants_json(request):
            return _json_error(str(exc))
        return _review_render(request, status=400, error=str(exc))
    card = review.card_review(card=card, rating=rating)
    payload = _rated_payload(request, card, "this card")
    if _wants_json(request):
        return JsonResponse(payload)
    messages.success(request, payload["message"])
    return redirect("review")


@login_required
@require_GET
def progress_page(request):
    summary = progress.progress_summary(user=request.user)
    chart = {
        "labels": [day.isoformat() for day in summary.timeline.days],
        "series": [
            {"label": label, "data": data} for label, data in summary.timeline.series
        ],
    }
    plugged = exercise_progress()
    notes = (
        plugged.regrade_notes(user=request.user)
        if plugged and plugged.regrade_notes
        else []
    )
    return render(
        request,
        "quiz/progress.html",
        {
            "summary": summary,
            "chart": chart,
            "chart_js": finders.find(CHART_JS) is not None,
            "regrade_notes": notes,
            # "My grades" and any other panel the layers above register.
            "panels": progress_panels(user=request.user),
        },
    )


@login_required
@require_GET
def progress_export(request):
    lock = exam_lock(request.user)
    if lock and (lock.questions or lock.exercises):
        # It holds the learner's self-check answers and submissions.
        return render(
            request,
            "quiz/exam_locked.html",
            {"message": lock.message("Downloading your data")},
            status=403,
        )
    data = data_export.learner_export(user=request.user)
    response = HttpResponse(
        json.dumps(data, cls=DjangoJSONEncoder, indent=2),
        content_type="application/json",
    )
    day = timezone.localdate().isoformat()
    response["Content-Disposition"] = (
        f'attachment; filename="transformer-qa-progress-{day}.json"'
    )
    return response
