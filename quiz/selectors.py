"""Reads for course pages."""

from __future__ import annotations

from django.db.models import Count, Prefetch, QuerySet

from quiz.models import FollowUp, Lesson, Question, Section


def section_list() -> QuerySet[Section]:
    lessons = Lesson.objects.only("id", "slug", "title", "order", "section_id")
    return Section.objects.annotate(lesson_count=Count("lessons")).prefetch_related(
        Prefetch("lessons", queryset=lessons)
    )


def lesson_get(*, slug: str) -> Lesson:
    return (
        Lesson.objects.select_related("section")
        .prefetch_related(
            Prefetch("follow_ups", queryset=FollowUp.objects.order_by("order")),
            Prefetch("questions", queryset=Question.objects.order_by("order")),
            "exercises",
        )
        .get(slug=slug)
    )
