"""/exercises/: every published exercise by section, with the learner's status."""

from __future__ import annotations

import pytest
from django.urls import reverse

from grader import selectors
from grader.models import Exercise, Submission
from quiz.models import Lesson, Section

pytestmark = pytest.mark.django_db


def make_exercise(slug, lesson=None, published=True) -> Exercise:
    return Exercise.objects.create(
        slug=slug,
        title=slug.replace("-", " ").title(),
        lesson=lesson,
        harness="block-param-count",
        entry_point="f",
        signature="f()",
        prompt="p",
        starter="s",
        solution="s",
        published=published,
    )


@pytest.fixture
def course(db):
    late = Section.objects.create(slug="late", order=2, title="Later")
    early = Section.objects.create(slug="early", order=1, title="Early")

    def lesson(section, order):
        return Lesson.objects.create(
            section=section,
            slug=f"{section.slug}-{order}",
            order=order,
            title=f"Lesson {section.slug} {order}",
            question="?",
            body="b",
        )

    return {
        "b-late": make_exercise("b-late", lesson(late, 1)),
        "z-early-2": make_exercise("z-early-2", lesson(early, 2)),
        "a-early-1": make_exercise("a-early-1", lesson(early, 1)),
        "loose": make_exercise("loose"),
        "draft": make_exercise("draft", lesson(early, 3), published=False),
    }


def submit(user, exercise, status):
    Submission.objects.create(
        user=user, exercise=exercise, code="x", seed=1, status=status
    )


def test_the_index_groups_published_exercises_by_section_in_course_order(
    course, learner, make_user
):
    submit(learner, course["a-early-1"], "failed")
    submit(learner, course["a-early-1"], "passed")
    submit(learner, course["b-late"], "failed")
    submit(make_user("other"), course["z-early-2"], "passed")  # not theirs
    sections = selectors.exercise_index(user=learner)
    assert [s.title for s in sections] == ["1. Early", "2. Later", "Other exercises"]
    assert [[(e.exercise.slug, e.status) for e in s.entries] for s in sections] == [
        [("a-early-1", "passed"), ("z-early-2", "not started")],
        [("b-late", "attempted")],
        [("loose", "not started")],
    ]


def test_visitors_see_the_index_without_status(client, course):
    response = client.get("/exercises/")
    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("exercise", args=["a-early-1"]) in html
    assert reverse("exercise", args=["draft"]) not in html  # unpublished
    assert "exercise-status" not in html and "Log in" in html


def test_a_learner_sees_their_status_and_the_count(client, course, learner):
    submit(learner, course["b-late"], "passed")
    client.force_login(learner)
    html = client.get(reverse("exercise-index")).content.decode()
    assert "You have passed 1 of 4 exercises." in html
    assert html.count("✓ Passed") == 1 and html.count("Not started") == 3
    assert reverse("exercise", args=["draft"]) not in html


def test_the_home_page_links_to_the_index(client, course):
    html = client.get(reverse("home")).content.decode()
    assert f'href="{reverse("exercise-index")}"' in html
