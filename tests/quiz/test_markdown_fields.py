"""Every Markdown field is rendered where the site shows it (issue 19: lesson
titles, questions, takeaways, follow-ups and analytics prompts were shown as
raw text), through the one `markdown` filter, and the admin preview matches."""

from __future__ import annotations

import pytest
from django.urls import reverse

from quiz.content.loader import content_load
from quiz.learning.review import cards_schedule
from quiz.models import FollowUp, Lesson, QuestionAttempt
from teaching.cohorts import cohort_create, cohort_join

pytestmark = pytest.mark.django_db

TITLE = "Tying `wte` and **lm_head**"
QUESTION = "Why is `lm_head` **tied**?"
TAKEAWAY = "One matrix, `wte`, serves **both** ends."
FOLLOW_UP = "What does `data_ptr()` **show**?"
PROMPT = "How many **bytes** does `wte` take?"


@pytest.fixture
def course(content_tree, make_user):
    content_tree.lesson(
        "basics",
        1,
        "first-lesson",
        title=TITLE,
        question=QUESTION,
        takeaway=TAKEAWAY,
        follow_ups=[{"question": FOLLOW_UP, "answer": "`True`."}],
        questions=[{"kind": "recall", "prompt": PROMPT, "answer": "Many."}],
    )
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="first-lesson")
    teacher = make_user("ian", "instructor")
    lea = make_user("lea", "learner")
    cohort = cohort_create(owner=teacher, name="Spring")
    cohort_join(cohort=cohort, user=lea)
    cards_schedule(
        user=lea, follow_ups=FollowUp.objects.filter(lesson=lesson), reason="exercise"
    )
    QuestionAttempt.objects.create(
        user=lea, question=lesson.questions.get(), answer="x", correct=True
    )
    return {"lea": lea, "ian": teacher, "cohort": cohort}


def _page(client, user, url: str) -> str:
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200, url
    return response.content.decode()


def _assert_rendered(html: str, *snippets: str) -> None:
    for snippet in snippets:
        assert snippet in html, snippet
    assert "`" not in html.split("<main", 1)[1], "a literal backtick is on the page"
    assert "**" not in html


def test_the_lesson_page_renders_title_question_takeaway_and_follow_up(client, course):
    html = _page(client, course["lea"], reverse("lesson", args=["first-lesson"]))
    _assert_rendered(
        html,
        "<h1>Tying <code>wte</code> and <strong>lm_head</strong></h1>",
        "Why is <code>lm_head</code> <strong>tied</strong>?",
        "One matrix, <code>wte</code>, serves <strong>both</strong> ends.",
        "What does <code>data_ptr()</code> <strong>show</strong>?",
        "How many <strong>bytes</strong> does <code>wte</code> take?",
    )
    # The window title is plain text.
    assert "<title>Tying wte and lm_head · " in html


def test_the_home_page_renders_lesson_titles(client, course):
    html = _page(client, course["lea"], reverse("home"))
    _assert_rendered(html, "Tying <code>wte</code> and <strong>lm_head</strong></a>")


def test_the_review_page_renders_the_title_and_follow_up(client, course):
    html = _page(client, course["lea"], reverse("review"))
    _assert_rendered(
        html,
        "Tying <code>wte</code> and <strong>lm_head</strong></a>",
        "What does <code>data_ptr()</code> <strong>show</strong>?",
    )


def test_the_analytics_page_renders_question_prompts(client, course):
    url = reverse("instructor-analytics", args=[course["cohort"].pk])
    html = _page(client, course["ian"], url)
    _assert_rendered(
        html, "How many <strong>bytes</strong> does <code>wte</code> take?"
    )


def test_admin_preview_of_an_inline_field_matches_the_site(client, admin_user):
    client.force_login(admin_user)
    url = reverse("admin:quiz_markdown_preview")
    inline = client.post(url + "?inline=1", {"text": QUESTION}).json()["html"]
    block = client.post(url, {"text": QUESTION}).json()["html"]
    assert inline == "Why is <code>lm_head</code> <strong>tied</strong>?"
    assert block == f"<p>{inline}</p>"


def test_admin_marks_title_question_and_takeaway_for_the_inline_preview(
    client, admin_user, course
):
    client.force_login(admin_user)
    lesson = Lesson.objects.get(slug="first-lesson")
    html = client.get(reverse("admin:quiz_lesson_change", args=[lesson.pk])).content
    html = html.decode()
    preview = reverse("admin:quiz_markdown_preview")
    for field in ("title", "question", "takeaway"):
        start = html.index(f'name="{field}"')
        tag = html[html.rindex("<", 0, start) : html.index(">", start)]
        assert f'data-markdown-preview="{preview}?inline=1"' in tag, field
