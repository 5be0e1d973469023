"""Reads for course pages."""

from __future__ import annotations

from django.db.models import Count, Prefetch, QuerySet

from quiz.content.models import FollowUp, Lesson, Question, Section


def section_list() -> QuerySet[Section]:
    """Sections in course order with their lessons (two queries)."""
    lessons = Lesson.objects.only("id", "slug", "title", "order", "section_id")
    # Meta.ordering is dropped from GROUP BY queries, so order explicitly.
    return (
        Section.objects.annotate(lesson_count=Count("lessons"))
        .order_by("order")
        .prefetch_related(Prefetch("lessons", queryset=lessons.order_by("order")))
    )


def lesson_get(*, slug: str) -> Lesson:
    return (
        Lesson.objects.select_related("section")
        .prefetch_related(
            Prefetch("follow_ups", queryset=FollowUp.objects.order_by("order")),
            Prefetch("questions", queryset=Question.objects.order_by("order")),
        )
        .get(slug=slug)
    )
