"""Instructor pages for assignments: the gradebook, one assignment, one learner.

Plain forms that work without JavaScript; every write goes through
teaching.assignments.services (the API's path too). Dates typed in a
form are read in the time zone they were shown in (quiz/templatetags/
zoned_time.py: the browser's, or UTC without JavaScript) and stored in UTC.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from grader.models import Exercise
from quiz.content.models import Lesson
from quiz.core.params import id_in_range
from teaching import selectors as sel
from teaching.access import cohort_or_404, instructor_required
from teaching.assignments import gradebook, services
from teaching.assignments.scoring import assignment_scores
from teaching.csv_files import csv_response, export_filename
from teaching.models import Assignment, CohortMembership
from teaching.quizzes.models import Quiz
from teaching.templatetags.zoned_time import FormTimeError, form_time


def _assignment_or_404(request, assignment_id: int) -> Assignment:
    try:
        return sel.assignment_get(user=request.user, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None


def _form_time(post, field: str, stored: datetime | None = None) -> datetime:
    """The posted date and time in UTC (zoned_time.form_time), or an
    AssignmentError naming the field."""
    try:
        return form_time(post, field, stored=stored)
    except FormTimeError as exc:
        raise services.AssignmentError(str(exc), field=exc.field) from None


def _float(value: str, field: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise services.AssignmentError("Give a number.", field=field) from None


KINDS = ("exercise", "lesson", "quiz")


def _choices(cohort, chosen_quizzes: list[str]) -> dict:
    """What an assignment can hold: published exercises, lessons with
    self-checks, the cohort's quizzes (not archived, unless already chosen:
    saving the form keeps them)."""
    # A bigint has at most 19 digits; int() refuses over 4,300 of them.
    kept = [
        int(q) for q in chosen_quizzes if q.isascii() and q.isdigit() and len(q) <= 19
    ]
    kept = [q for q in kept if id_in_range(q)]
    return {
        "exercises": Exercise.objects.filter(published=True).order_by("slug"),
        "lessons": Lesson.objects.filter(questions__isnull=False)
        .distinct()
        .select_related("section")
        .order_by("section__order", "order"),
        "quizzes": Quiz.objects.filter(cohort=cohort).filter(
            Q(archived_at__isnull=True) | Q(pk__in=kept)
        ),
    }


def _items_from_post(post) -> list[services.ItemSpec]:
    specs = []
    for kind in KINDS:
        for slug in post.getlist(kind):
            weight = _float(post.get(f"weight-{kind}-{slug}", "1") or "1", "items")
            specs.append(services.ItemSpec(kind, slug, weight))
    return specs


def _values_from_post(post, assignment: Assignment | None = None) -> dict:
    """The form's fields; a date left as the form showed it keeps its value."""
    return {
        "title": post.get("title", ""),
        "opens_at": _form_time(post, "opens_at", assignment and assignment.opens_at),
        "due_at": _form_time(post, "due_at", assignment and assignment.due_at),
        "late_policy": post.get("late_policy", ""),
        **{
            name: _float(post.get(name) or default, name)
            for name, default in (("penalty_per_day", "0"), ("penalty_cap", "1"))
        },
    }


def _form_context(cohort, post=None, assignment: Assignment | None = None) -> dict:
    """The form's values: what was posted, else the assignment's, else blanks."""
    if post is not None:
        chosen = {(k, s) for k in KINDS for s in post.getlist(k)}
        weights = {
            key.removeprefix("weight-"): value
            for key, value in post.items()
            if key.startswith("weight-")
        }
        values = post
    elif assignment is not None:
        rows = assignment.items.select_related("exercise", "lesson")
        chosen = {(i.kind, i.slug) for i in rows}
        weights = {f"{i.kind}-{i.slug}": f"{i.weight:g}" for i in rows}
        values = {
            "title": assignment.title,
            # Datetimes: {% zoned_datetime %} shows them in the browser's zone.
            "opens_at": assignment.opens_at,
            "due_at": assignment.due_at,
            "late_policy": assignment.late_policy,
            "penalty_per_day": f"{assignment.penalty_per_day:g}",
            "penalty_cap": f"{assignment.penalty_cap:g}",
        }
    else:
        chosen, weights, values = set(), {}, {"late_policy": "none"}
    return {
        "values": values,
        "chosen": {f"{k}-{s}" for k, s in chosen},
        "quizzes_chosen": any(k == "quiz" for k, _ in chosen),
        "weights": weights,
        "policies": Assignment.LatePolicy.choices,
        **_choices(cohort, [s for k, s in chosen if k == "quiz"]),
    }


def _form_again(request, context: dict, exc: services.AssignmentError):
    """The form with what was posted and why it was refused (nothing saved)."""
    messages.error(request, str(exc))
    context.update(_form_context(context["cohort"], request.POST))
    return render(
        request, "teaching/instructor/assignment_form.html", context, status=400
    )


@instructor_required
def gradebook_view(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    book = gradebook.cohort_gradebook(cohort=cohort, sort=request.GET.get("sort", ""))
    return render(
        request,
        "teaching/instructor/gradebook.html",
        {
            "cohort": cohort,
            "book": book,
            "archived": gradebook.cohort_assignments(cohort=cohort, archived=True),
        },
    )


@instructor_required
def gradebook_csv_view(request, cohort_id: int, shape: str):
    cohort = cohort_or_404(request, cohort_id)
    if shape not in ("plain", "canvas"):
        raise Http404("No such export.")
    book = gradebook.cohort_gradebook(cohort=cohort)
    if shape == "canvas":
        text = gradebook.canvas_csv(
            section=cohort.name,
            assignments=book.assignments,
            rows=book.rows,
            quizzes=book.quizzes,
        )
    else:
        text = gradebook.cohort_csv(book)
    name = "gradebook" if shape == "plain" else "gradebook-canvas"
    return csv_response(text=text, filename=export_filename(cohort, name))


@instructor_required
@require_http_methods(["GET", "POST"])
def assignment_new(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    context = {"cohort": cohort, **_form_context(cohort)}
    if request.method == "POST":
        try:
            assignment = services.assignment_create(
                cohort=cohort,
                actor=request.user,
                items=_items_from_post(request.POST),
                **_values_from_post(request.POST),
            )
        except services.AssignmentError as exc:
            return _form_again(request, context, exc)
        messages.success(request, f"Created {assignment.title}.")
        return redirect("instructor-assignment", assignment_id=assignment.pk)
    return render(request, "teaching/instructor/assignment_form.html", context)


@instructor_required
@require_http_methods(["GET", "POST"])
def assignment_edit(request, assignment_id: int):
    assignment = _assignment_or_404(request, assignment_id)
    context = {
        "cohort": assignment.cohort,
        "assignment": assignment,
        **_form_context(assignment.cohort, assignment=assignment),
    }
    if request.method == "POST":
        try:
            services.assignment_update(
                assignment=assignment,
                actor=request.user,
                items=_items_from_post(request.POST),
                **_values_from_post(request.POST, assignment),
            )
        except services.AssignmentError as exc:
            return _form_again(request, context, exc)
        messages.success(request, "Saved; the scores follow the change.")
        return redirect("instructor-assignment", assignment_id=assignment.pk)
    return render(request, "teaching/instructor/assignment_form.html", context)


@instructor_required
def assignment_detail(request, assignment_id: int):
    assignment = _assignment_or_404(request, assignment_id)
    return render(
        request,
        "teaching/instructor/assignment.html",
        {
            "assignment": assignment,
            "cohort": assignment.cohort,
            "items": list(
                assignment.items.select_related("exercise", "lesson", "quiz")
            ),
            "scores": gradebook.assignment_gradebook(assignment),
            "extensions": assignment.extensions.select_related("learner").order_by(
                "learner__username"
            ),
        },
    )


@instructor_required
@require_POST
def assignment_archive(request, assignment_id: int):
    assignment = _assignment_or_404(request, assignment_id)
    archived = request.POST.get("archived") == "1"
    services.assignment_update(
        assignment=assignment, actor=request.user, archived=archived
    )
    messages.success(request, "Archived." if archived else "Restored.")
    return redirect("instructor-assignment", assignment_id=assignment.pk)


@instructor_required
@require_POST
def assignment_delete(request, assignment_id: int):
    assignment = _assignment_or_404(request, assignment_id)
    cohort_id = assignment.cohort_id
    try:
        services.assignment_delete(assignment=assignment, actor=request.user)
    except services.AssignmentError as exc:
        messages.error(request, str(exc))
        return redirect("instructor-assignment", assignment_id=assignment.pk)
    messages.success(request, "Deleted.")
    return redirect("instructor-gradebook", cohort_id=cohort_id)


def _member_or_404(assignment: Assignment, user_id: int):
    membership = (
        CohortMembership.objects.filter(cohort=assignment.cohort, user_id=user_id)
        .select_related("user")
        .first()
        if id_in_range(user_id)
        else None
    )
    if membership is None:
        raise Http404("No such learner in this cohort.")
    return membership.user


@instructor_required
def assignment_learner(request, assignment_id: int, user_id: int):
    """Which attempt counted for each item, and why; the override form."""
    assignment = _assignment_or_404(request, assignment_id)
    learner = _member_or_404(assignment, user_id)
    [score] = assignment_scores(assignment, [(learner.pk, learner.username)])
    return render(
        request,
        "teaching/instructor/assignment_learner.html",
        {
            "assignment": assignment,
            "cohort": assignment.cohort,
            "learner": learner,
            "score": score,
            # Each item with the points it brings (weight x score).
            "items": [(s, s.item.weight * s.score) for s in score.items],
        },
    )


@instructor_required
@require_POST
def override_view(request, assignment_id: int, user_id: int):
    assignment = _assignment_or_404(request, assignment_id)
    learner = _member_or_404(assignment, user_id)
    try:
        item_id = int(request.POST.get("item", ""))
        score = float(request.POST.get("score", ""))
    except ValueError:
        messages.error(request, "Give the item and a score from 0 to 1.")
    else:
        try:
            services.override_set(
                assignment=assignment,
                actor=request.user,
                learner=learner,
                item_id=item_id,
                score=score,
                reason=request.POST.get("reason", ""),
            )
        except services.AssignmentError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, "Score overridden; the reason is on record.")
    return redirect(
        "instructor-assignment-learner", assignment_id=assignment.pk, user_id=user_id
    )


@instructor_required
@require_POST
def extension_view(request, assignment_id: int):
    assignment = _assignment_or_404(request, assignment_id)
    users = get_user_model().objects
    learner = users.filter(username=request.POST.get("learner", "")).first()
    try:
        if learner is None:
            raise services.AssignmentError("No such learner.")
        services.extension_set(
            assignment=assignment,
            actor=request.user,
            learner=learner,
            due_at=_form_time(request.POST, "due_at"),
        )
    except services.AssignmentError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Extended for {learner.username}.")
    return redirect("instructor-assignment", assignment_id=assignment.pk)
