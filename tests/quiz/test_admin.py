"""The admin lets admins author everything and refuses everyone else."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quiz.models import FollowUp, Lesson, Question, Section

pytestmark = pytest.mark.django_db

MODELS = [
    ("quiz", "section"),
    ("quiz", "lesson"),
    ("quiz", "followup"),
    ("quiz", "question"),
    ("grader", "exercise"),
]


@pytest.fixture
def lesson():
    section = Section.objects.create(slug="basics", order=1, title="Basics")
    lesson = Lesson.objects.create(
        section=section,
        slug="tying",
        order=1,
        title="Tying",
        question="Why 124M?",
        body="Some **bold** text\n\n```python\nx = 1\n```\n<script>alert(1)</script>",
    )
    FollowUp.objects.create(lesson=lesson, question="Q?", answer="A.")
    Question.objects.create(
        lesson=lesson, kind="choice", prompt="P", choices=["a", "b"], correct_choice=0
    )
    return lesson


def admin_urls(lesson) -> list[str]:
    urls = [reverse("admin:index")]
    for app, model in MODELS:
        urls.append(reverse(f"admin:{app}_{model}_changelist"))
        urls.append(reverse(f"admin:{app}_{model}_add"))
    urls.append(reverse("admin:quiz_lesson_change", args=[lesson.pk]))
    urls.append(reverse("admin:quiz_section_change", args=[lesson.section.pk]))
    return urls


def test_every_admin_page_loads_for_an_admin(client, admin_user, lesson):
    client.force_login(admin_user)
    for url in admin_urls(lesson):
        response = client.get(url)
        assert response.status_code == 200, url


@pytest.mark.parametrize("role", ["learner", "instructor"])
def test_admin_pages_are_refused_to_other_roles(client, make_user, lesson, role):
    client.force_login(make_user(f"user-{role}", role))
    for url in admin_urls(lesson):
        response = client.get(url)
        assert response.status_code == 302, url
        assert reverse("admin:login") in response["Location"]


def test_anonymous_visitors_are_sent_to_the_admin_login(client, lesson):
    response = client.get(reverse("admin:quiz_lesson_changelist"))
    assert response.status_code == 302


def test_the_lesson_page_shows_inlines_and_a_sanitised_preview(
    client, admin_user, lesson
):
    client.force_login(admin_user)
    html = client.get(
        reverse("admin:quiz_lesson_change", args=[lesson.pk])
    ).content.decode()
    assert "follow_ups-0-question" in html
    assert "questions-0-prompt" in html
    assert "<strong>bold</strong>" in html
    assert '<div class="highlight">' in html
    assert "<script>alert(1)</script>" not in html


def test_an_admin_can_add_a_lesson_with_inline_follow_ups_and_questions(
    client, admin_user, lesson
):
    client.force_login(admin_user)
    data = {
        "section": lesson.section.pk,
        "order": 2,
        "title": "Counting",
        "slug": "counting",
        "question": "How many?",
        "takeaway": "",
        "body": "Body",
        "tags": '["count"]',
        "reading_time": 4,
        "follow_ups-TOTAL_FORMS": 1,
        "follow_ups-INITIAL_FORMS": 0,
        "follow_ups-0-order": 0,
        "follow_ups-0-question": "Next?",
        "follow_ups-0-answer": "Yes.",
        "questions-TOTAL_FORMS": 1,
        "questions-INITIAL_FORMS": 0,
        "questions-0-order": 0,
        "questions-0-kind": "numeric",
        "questions-0-prompt": "Block params?",
        "questions-0-choices": "[]",
        "questions-0-numeric_answer": "7087872",
        "questions-0-tolerance": "0",
        "questions-0-model_answer": "",
        "questions-0-explanation": "",
    }
    response = client.post(reverse("admin:quiz_lesson_add"), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    created = Lesson.objects.get(slug="counting")
    assert created.follow_ups.get().question == "Next?"
    assert created.questions.get().numeric_answer == 7087872


def test_a_choice_question_without_an_answer_is_refused_by_the_database(lesson):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        Question.objects.create(lesson=lesson, kind="choice", prompt="P", choices=["a"])
