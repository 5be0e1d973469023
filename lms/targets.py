"""What a resource link opens, and what deep linking offers to link.

A link the tool made (deep linking) carries `resource=kind:key` as a custom
parameter: `lesson:<slug>`, `exercise:<slug>`, `assignment:<id>` or
`quiz:<id>` (an assignment or a quiz of the course's cohort). A link an LMS
admin typed may instead point its target_link_uri at a lesson or exercise
page of this site; both land on the same pages. Anything else lands on the
home page.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from django.urls import Resolver404, resolve, reverse

from grader.models import Exercise
from quiz.content.models import Lesson
from quiz.core.params import id_in_range
from teaching.models import Assignment
from teaching.quizzes.models import Quiz

LESSON, EXERCISE, ASSIGNMENT, QUIZ = "lesson", "exercise", "assignment", "quiz"


@dataclass(frozen=True)
class Target:
    kind: str
    key: str
    title: str

    @property
    def resource(self) -> str:
        return f"{self.kind}:{self.key}"


def _find(kind: str, key: str, *, cohort_id: int | None) -> Target | None:
    if kind == LESSON:
        lesson = Lesson.objects.filter(slug=key).first()
        return lesson and Target(LESSON, lesson.slug, lesson.title)
    if kind == EXERCISE:
        exercise = Exercise.objects.filter(slug=key, published=True).first()
        return exercise and Target(EXERCISE, exercise.slug, exercise.title)
    if kind == ASSIGNMENT and cohort_id is not None and _an_id(key):
        assignment = Assignment.objects.filter(
            pk=int(key), cohort_id=cohort_id, archived_at__isnull=True
        ).first()
        return assignment and Target(ASSIGNMENT, str(assignment.pk), assignment.title)
    if kind == QUIZ and cohort_id is not None and _an_id(key):
        quiz = Quiz.objects.filter(
            pk=int(key), cohort_id=cohort_id, archived_at__isnull=True
        ).first()
        return quiz and Target(QUIZ, str(quiz.pk), quiz.title)
    return None


def _an_id(key: str) -> bool:
    return key.isascii() and key.isdigit() and len(key) <= 19 and id_in_range(int(key))


def target_from_launch(launch_data: dict, *, cohort_id: int | None) -> Target | None:
    custom = launch_data.get("https://purl.imsglobal.org/spec/lti/claim/custom") or {}
    resource = str(custom.get("resource", "")) if isinstance(custom, dict) else ""
    if ":" in resource:
        kind, key = resource.split(":", 1)
        return _find(kind, key, cohort_id=cohort_id)
    uri = str(
        launch_data.get("https://purl.imsglobal.org/spec/lti/claim/target_link_uri")
        or ""
    )
    try:
        match = resolve(urlsplit(uri).path or "/")
    except Resolver404:
        return None
    names = {"lesson": LESSON, "exercise": EXERCISE}
    if match.url_name in names:
        return _find(names[match.url_name], match.kwargs["slug"], cohort_id=cohort_id)
    return None


def target_url(target: Target | None, *, teaching: bool) -> str:
    if target is None:
        return reverse("home")
    if target.kind == LESSON:
        return reverse("lesson", args=[target.key])
    if target.kind == EXERCISE:
        return reverse("exercise", args=[target.key])
    if target.kind == QUIZ:  # learners take it; instructors see its page
        return reverse("instructor-quiz" if teaching else "quiz", args=[target.key])
    if teaching:
        return reverse("instructor-assignment", args=[int(target.key)])
    return reverse("home") + f"#assignment-{target.key}"


def pickable(*, cohort_id: int | None) -> dict[str, list[Target]]:
    """Everything deep linking may offer, by kind, in course order."""
    assignments, quizzes = [], []
    if cohort_id is not None:
        assignments = [
            Target(ASSIGNMENT, str(a.pk), a.title)
            for a in Assignment.objects.filter(
                cohort_id=cohort_id, archived_at__isnull=True
            ).order_by("due_at", "pk")
        ]
        quizzes = [
            Target(QUIZ, str(q.pk), q.title)
            for q in Quiz.objects.filter(
                cohort_id=cohort_id, archived_at__isnull=True
            ).order_by("closes_at", "pk")
        ]
    return {
        LESSON: [
            Target(LESSON, slug, title)
            for slug, title in Lesson.objects.order_by(
                "section__order", "order"
            ).values_list("slug", "title")
        ],
        EXERCISE: [
            Target(EXERCISE, slug, title)
            for slug, title in Exercise.objects.filter(published=True)
            .order_by("slug")
            .values_list("slug", "title")
        ],
        ASSIGNMENT: assignments,
        QUIZ: quizzes,
    }


def target_get(resource: str, *, cohort_id: int | None) -> Target | None:
    kind, _, key = str(resource).partition(":")
    return _find(kind, key, cohort_id=cohort_id)
