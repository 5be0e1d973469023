"""Instructor pages for quizzes: list, create, one quiz, variants, statistics, regrade.

Plain forms that work without JavaScript; every write goes through
teaching.quizzes.services (the API's path too).
"""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from grader.models import Exercise
from quiz.content.models import Lesson, QuestionTemplate, Section
from quiz.core.params import BIGINT_MAX, BadNumber, id_in_range, whole_number
from teaching.access import cohort_or_404, instructor_required
from teaching.quizzes import access, attempt_regrade, results, services
from teaching.quizzes.bank import Bank, pool_refs
from teaching.quizzes.chart import facility_chart
from teaching.quizzes.item_analysis import report
from teaching.quizzes.models import Quiz, QuizAccommodation, QuizRegrade
from teaching.quizzes.policy import last_close
from teaching.quizzes.security import slot_practice
from teaching.templatetags.zoned_time import FormTimeError, form_time

SAMPLE_VARIANTS = 3
# "2 x3: template:kv-cache-bytes, lesson:kv-cache" -> points 2, draw 3, pool.
# ASCII digits only: \d takes "١٢" (which int() reads as 12).
_SLOT_LINE = re.compile(
    r"^\s*(?P<points>\d+(?:\.\d+)?)\s*(?:x\s*(?P<draw>\d+))?\s*:(?P<pool>.*)$",
    re.ASCII,
)
# A draw of more digits is more than any pool holds (and int() refuses 4,301).
_DRAW_DIGITS = 6
_POOL_WORDS = {
    "question": "questions",
    "template": "templates",
    "quiz-question": "quiz_questions",
    "exercise": "exercises",
    "lesson": "lessons",
    "section": "sections",
}


def form_learner(post):
    """The learner a form's `learner` field names; QuizError if none."""
    username = post.get("learner", "")
    learner = get_user_model().objects.filter(username=username).first()
    if learner is None:
        raise services.QuizError("Pick a learner of the cohort.", field="learner")
    return learner


def quiz_form_time(post, field: str, stored=None, *, required: bool = True):
    """A form's date and time in UTC (zoned_time.form_time: read in the zone
    it was shown in, `stored` kept if unchanged), or QuizError naming it."""
    try:
        return form_time(post, field, stored=stored, required=required)
    except FormTimeError as exc:
        raise services.QuizError(str(exc), field=exc.field) from None


def parse_slots(text: str) -> list[services.SlotSpec]:
    """The form's slot lines as SlotSpecs; QuizError naming the line if bad."""
    specs = []
    lines = [line for line in text.splitlines() if line.strip()]
    for n, line in enumerate(lines, start=1):
        match = _SLOT_LINE.match(line)
        if not match:
            raise services.QuizError(
                f"Line {n}: write 'points x draw: kind:name, ...', for example "
                "'2 x1: template:gpt2-params-tied, lesson:kv-cache'.",
                field="slots",
            )
        pool: dict[str, list] = {}
        for word in filter(None, (w.strip() for w in match["pool"].split(","))):
            kind, _, name = word.partition(":")
            key = _POOL_WORDS.get(kind.strip().lower())
            if key is None or not name.strip():
                raise services.QuizError(
                    f"Line {n}: {word!r} is not question:<id>, template:<slug>, "
                    "quiz-question:<slug>, exercise:<slug>, lesson:<slug> or "
                    "section:<slug>.",
                    field="slots",
                )
            value = name.strip()
            if key == "questions":
                try:  # ASCII digits, a bigint: int() takes "²", refuses 4,301
                    value = whole_number(value, minimum=1)
                except BadNumber:
                    value = None
                if value is None:
                    raise services.QuizError(
                        f"Line {n}: question ids are whole numbers from 1 to "
                        f"{BIGINT_MAX}.",
                        field="slots",
                    )
            pool.setdefault(key, []).append(value)
        draw = match["draw"] or "1"
        if len(draw) > _DRAW_DIGITS:
            raise services.QuizError(
                f"Line {n}: draw at most as many questions as the pool holds.",
                field="slots",
            )
        # Points as typed; the service refuses 0, over 1000 and 1e999 alike.
        specs.append(
            services.SlotSpec(pool=pool, points=float(match["points"]), draw=int(draw))
        )
    return specs


def slot_words(slot, pool_size: int) -> str:
    """A slot's points and draw in words: "2 points shared by 2 questions
    drawn from 5 (1 point each)", never the "2 x2" of the slot text."""
    points = f"{slot.points:g} point{'s' * (slot.points != 1)}"
    if slot.draw == 1:
        return f"{points}: one question drawn from {pool_size}"
    each = slot.points / slot.draw
    return (
        f"{points} shared by {slot.draw} questions drawn from {pool_size} "
        f"({each:g} point{'s' * (each != 1)} each)"
    )


def pool_text(pool: dict) -> str:
    """A pool as the slot text writes it: "template:kv-cache-bytes, lesson:x"."""
    names = {v: k for k, v in _POOL_WORDS.items()}
    return ", ".join(
        f"{names[key]}:{v}" for key, values in pool.items() for v in values
    )


def _slots_text(quiz: Quiz) -> str:
    return "\n".join(
        f"{slot.points:g} x{slot.draw}: {pool_text(slot.pool)}"
        for slot in quiz.slots.all()
    )


@instructor_required
def quiz_list(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    quizzes = Quiz.objects.filter(cohort=cohort).order_by("closes_at", "pk")
    return render(
        request,
        "teaching/instructor/quiz_list.html",
        {"cohort": cohort, "quizzes": quizzes},
    )


def _form_values(request, quiz=None) -> tuple[dict, list[services.SlotSpec]]:
    post = request.POST
    limit = post.get("time_limit", "").strip()
    try:
        attempts = int(post.get("attempts_allowed", "1"))
    except ValueError:
        raise services.QuizError(
            "Attempts allowed is a whole number.", field="attempts_allowed"
        ) from None
    try:
        time_limit = float(limit) if limit else None
    except ValueError:
        raise services.QuizError(
            "The time limit is a number of minutes (7.5 is 7 min 30 s).",
            field="time_limit",
        ) from None
    values = {
        "title": post.get("title", ""),
        "opens_at": quiz_form_time(post, "opens_at", quiz and quiz.opens_at),
        "closes_at": quiz_form_time(post, "closes_at", quiz and quiz.closes_at),
        "time_limit": time_limit,
        "attempts_allowed": attempts,
        "combine": post.get("combine", Quiz.Combine.BEST),
        "feedback": post.get("feedback", Quiz.Feedback.AFTER_SUBMIT),
        "shuffle": post.get("shuffle") == "on",
    }
    if values["combine"] not in Quiz.Combine.values:
        raise services.QuizError("Pick how attempts combine.", field="combine")
    if values["feedback"] not in Quiz.Feedback.values:
        raise services.QuizError("Pick when answers are shown.", field="feedback")
    return values, parse_slots(post.get("slots", ""))


_REF_PREFIX = {"question": "q", "template": "t", "quiz-question": "b", "exercise": "x"}


def slot_titles(text: str) -> dict[str, str]:
    """What each word of the slot text names ("template:x" -> its title), for
    the builder's slot list; words that name nothing are left out."""
    words = {
        word.strip()
        for line in str(text).splitlines()
        for word in line.partition(":")[2].split(",")
        if ":" in word
    }
    refs = {}
    for word in words:
        kind, _, name = word.partition(":")
        if kind in _REF_PREFIX:
            refs[f"{_REF_PREFIX[kind]}:{name}"] = word
    bank = Bank(refs)
    titles = {
        word: bank.draw(ref, "sample:0").title
        for ref, word in refs.items()
        if bank.has(ref)
    }
    for kind, model in (("lesson", Lesson), ("section", Section)):
        slugs = {w.partition(":")[2]: w for w in words if w.startswith(kind + ":")}
        for slug, title in model.objects.filter(slug__in=slugs).values_list(
            "slug", "title"
        ):
            titles[slugs[slug]] = f"all of {kind} “{title}”"
    return titles


def _form_context(cohort, quiz=None, **extra) -> dict:
    form = extra.get("form") or {}
    return {
        "slot_titles": slot_titles(form.get("slots", "") or ""),
        "cohort": cohort,
        "quiz": quiz,
        "combines": Quiz.Combine.choices,
        "feedbacks": Quiz.Feedback.choices,
        "sections": Section.objects.order_by("order"),
        "lessons": Lesson.objects.select_related("section"),
        "templates": QuestionTemplate.objects.select_related("section"),
        "exercises": Exercise.objects.filter(published=True).order_by("slug"),
        **extra,
    }


@instructor_required
@require_http_methods(["GET", "POST"])
def quiz_new(request, cohort_id: int):
    cohort = cohort_or_404(request, cohort_id)
    # A new quiz opens now and closes in a week unless the form says otherwise.
    opens = timezone.now().replace(second=0, microsecond=0)
    form = {
        "shuffle": True,
        "attempts_allowed": 1,
        "time_limit": 30,
        "opens_at": opens,
        "closes_at": opens + timedelta(days=7),
    }
    if request.method == "POST":
        form = request.POST
        try:
            values, slots = _form_values(request)
            quiz = services.quiz_create(
                cohort=cohort, actor=request.user, slots=slots, **values
            )
        except services.QuizError as exc:
            return render(
                request,
                "teaching/instructor/quiz_form.html",
                _form_context(cohort, form=form, error=str(exc), field=exc.field),
                status=400,
            )
        messages.success(request, f"Quiz “{quiz.title}” created.")
        return redirect("instructor-quiz", quiz.pk)
    return render(
        request, "teaching/instructor/quiz_form.html", _form_context(cohort, form=form)
    )


@instructor_required
@require_http_methods(["GET", "POST"])
def quiz_edit(request, quiz_id: int):
    quiz = access.quiz_taught(request.user, quiz_id)
    form = {
        "title": quiz.title,
        # Datetimes: {% zoned_datetime %} shows them in the browser's zone.
        "opens_at": quiz.opens_at,
        "closes_at": quiz.closes_at,
        "time_limit": f"{quiz.time_limit:g}" if quiz.time_limit else "",
        "attempts_allowed": quiz.attempts_allowed,
        "combine": quiz.combine,
        "feedback": quiz.feedback,
        "shuffle": quiz.shuffle,
        "slots": _slots_text(quiz),
    }
    if request.method == "POST":
        form = request.POST
        try:
            values, slots = _form_values(request, quiz)
            same = [(s.points, s.draw, s.pool) for s in quiz.slots.all()]
            changed = [(s.points, s.draw, s.pool) for s in slots] != same
            services.quiz_update(
                quiz=quiz,
                actor=request.user,
                slots=slots if changed else None,
                **values,
            )
        except services.QuizError as exc:
            return render(
                request,
                "teaching/instructor/quiz_form.html",
                _form_context(
                    quiz.cohort, quiz, form=form, error=str(exc), field=exc.field
                ),
                status=400,
            )
        messages.success(request, "Quiz saved.")
        return redirect("instructor-quiz", quiz.pk)
    return render(
        request,
        "teaching/instructor/quiz_form.html",
        _form_context(quiz.cohort, quiz, form=form),
    )


@instructor_required
def quiz_detail(request, quiz_id: int):
    quiz = access.quiz_taught(request.user, quiz_id)
    services.close_expired(quiz=quiz)
    rows = results.quiz_results(quiz)
    slots = list(quiz.slots.all())
    for slot in slots:
        slot.practice = slot_practice(quiz, slot)
        slot.words = slot_words(slot, len(pool_refs(slot.pool)))
        slot.pool_text = pool_text(slot.pool)
    now = timezone.now()
    return render(
        request,
        "teaching/instructor/quiz.html",
        {
            "quiz": quiz,
            "cohort": quiz.cohort,
            "slots": slots,
            "rows": rows,
            "accommodations": QuizAccommodation.objects.filter(quiz=quiz)
            .select_related("learner")
            .order_by("learner__username"),
            "regrades": quiz.regrades.all()[:5],
            "has_attempts": services.quiz_has_attempts(quiz),
            "practice": any(slot.practice for slot in slots),
            "open_now": quiz.opens_at < now < last_close(quiz),
        },
    )


@instructor_required
def quiz_variants(request, quiz_id: int):
    """A few draws of every slot, with their keys: what learners may get."""
    quiz = access.quiz_taught(request.user, quiz_id)
    slots = []
    for slot in quiz.slots.all():
        refs = pool_refs(slot.pool)
        bank = Bank(refs)
        samples = []
        for ref in refs[:20]:
            seeds = [f"sample:{n}" for n in range(SAMPLE_VARIANTS)]
            drawn = [bank.draw(ref, seed) for seed in seeds]
            unique = {d.prompt: d for d in drawn}  # a self-check has one variant
            samples.append({"ref": ref, "variants": list(unique.values())})
        slots.append(
            {
                "slot": slot,
                "pool_size": len(refs),
                "samples": samples,
                "practice": slot_practice(quiz, slot),
            }
        )
    return render(
        request,
        "teaching/instructor/quiz_variants.html",
        {"quiz": quiz, "cohort": quiz.cohort, "slots": slots},
    )


@instructor_required
def quiz_statistics(request, quiz_id: int):
    quiz = access.quiz_taught(request.user, quiz_id)
    services.close_expired(quiz=quiz)
    data = report.analysis_dict(report.quiz_analysis(quiz))
    return render(
        request,
        "teaching/instructor/quiz_statistics.html",
        {
            "quiz": quiz,
            "cohort": quiz.cohort,
            "stats": data,
            "chart": facility_chart(data),
        },
    )


@instructor_required
@require_POST
def quiz_regrade(request, quiz_id: int):
    quiz = access.quiz_taught(request.user, quiz_id)
    regrade = attempt_regrade.quiz_regrade(quiz=quiz, actor=request.user)
    return redirect("instructor-quiz-regrade", regrade.pk)


@instructor_required
def quiz_regrade_report(request, regrade_id: int):
    regrade = (
        QuizRegrade.objects.select_related("quiz__cohort")
        .filter(pk=regrade_id if id_in_range(regrade_id) else 0)
        .first()
    )
    if regrade is None:
        raise Http404("No such regrade.")
    access.quiz_taught(request.user, regrade.quiz_id)
    return render(
        request,
        "teaching/instructor/quiz_regrade.html",
        {
            "regrade": regrade,
            "quiz": regrade.quiz,
            "cohort": regrade.quiz.cohort,
            "changes": attempt_regrade.regrade_report(regrade),
        },
    )


@instructor_required
@require_POST
def quiz_accommodation(request, quiz_id: int):
    quiz = access.quiz_taught(request.user, quiz_id)
    post = request.POST
    try:
        learner = form_learner(post)
        factor = post.get("time_factor", "").strip()
        services.accommodation_set(
            quiz=quiz,
            learner=learner,
            actor=request.user,
            time_factor=float(factor) if factor else None,
            closes_at=quiz_form_time(post, "closes_at", required=False),
        )
    except services.QuizError as exc:
        messages.error(request, str(exc))
    except ValueError:
        messages.error(request, "The time factor is a number such as 1.5.")
    else:
        messages.success(request, f"Accommodation saved for {learner.username}.")
    return redirect("instructor-quiz", quiz.pk)
