"""The lesson page: reading is recorded, self-checks answered, follow-ups rated.

Each interaction is checked both ways a browser sends it: a plain form POST
(no JavaScript: redirect back, or the page again with a message) and fetch
with `Accept: application/json` (JSON, 400 for bad input).
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from quiz.content.loader import content_load
from quiz.models import (
    FollowUp,
    Lesson,
    LessonRead,
    Question,
    QuestionAttempt,
    ReviewCard,
    ReviewLog,
)

pytestmark = pytest.mark.django_db

JSON = {"accept": "application/json"}


@pytest.fixture
def course(content_tree):
    content_tree.lesson(
        "basics",
        3,
        "rich-lesson",
        body="## Answer\n\n```python\nx = 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        questions=[
            {
                "kind": "choice",
                "prompt": "Which is tied?",
                "choices": ["wpe", "wte", "ln_f"],
                "answer": 1,
                "explanation": "The **token embedding** is tied.",
            },
            {
                "kind": "numeric",
                "prompt": "Parameters of GPT-2 small?",
                "answer": 124439808,
                "tolerance": 0,
                "explanation": "Counted once when tied.",
            },
            {
                "kind": "recall",
                "prompt": "Why tie?",
                "answer": "Same vocabulary space.",
                "explanation": "Saves 38M parameters.",
            },
        ],
    )
    content_load(root=content_tree.root)
    return Lesson.objects.get(slug="rich-lesson")


def q(lesson, order):
    return lesson.questions.get(order=order)


def answer_url(lesson, question):
    return reverse("question-answer", args=[lesson.slug, question.pk])


def rate_url(lesson, follow_up):
    return reverse("follow-up-rate", args=[lesson.slug, follow_up.pk])


# Reading


def test_opening_a_lesson_records_one_read_and_keeps_the_first_time(
    client, learner, course
):
    client.force_login(learner)
    client.get(course.get_absolute_url())
    first = LessonRead.objects.get(user=learner, lesson=course)
    client.get(course.get_absolute_url())
    again = LessonRead.objects.get(user=learner, lesson=course)
    assert again.first_read_at == first.first_read_at
    assert again.last_read_at > first.last_read_at
    assert LessonRead.objects.count() == 1


def test_anonymous_readers_see_the_forms_and_leave_no_trace(client, course):
    html = client.get(course.get_absolute_url()).content.decode()
    assert answer_url(course, q(course, 0)) in html
    assert 'class="highlight"' in html  # highlighted code
    assert '<table tabindex="0">' in html  # scrolls sideways, so a tab stop
    assert not LessonRead.objects.exists()


def test_anonymous_posts_go_to_login_and_come_back_to_the_lesson(client, course):
    question = q(course, 0)
    response = client.post(answer_url(course, question), {"answer": "1"})
    assert response.status_code == 302
    assert response.url.startswith(reverse("login") + "?next=")
    assert "rich-lesson" in response.url
    follow_up = course.follow_ups.get()
    response = client.post(rate_url(course, follow_up), {"rating": "3"})
    assert response.url.startswith(reverse("login") + "?next=")
    assert (
        client.post(answer_url(course, question), {}, headers=JSON).status_code == 401
    )
    assert not QuestionAttempt.objects.exists() and not ReviewCard.objects.exists()


# Self-checks


def test_a_right_choice_by_fetch_returns_feedback_with_the_explanation(
    client, learner, course
):
    client.force_login(learner)
    response = client.post(
        answer_url(course, q(course, 0)), {"answer": "1"}, headers=JSON
    )
    assert response.status_code == 200
    body = response.json()
    assert body["correct"] is True
    assert "Right." in body["html"] and "<strong>wte</strong>" in body["html"]
    assert "<strong>token embedding</strong>" in body["html"]  # Markdown rendered
    attempt = QuestionAttempt.objects.get()
    assert (attempt.answer, attempt.correct) == ("1", True)
    assert not ReviewCard.objects.exists()  # right first time: nothing to review


def test_a_wrong_choice_schedules_the_question_for_review(client, learner, course):
    client.force_login(learner)
    body = client.post(
        answer_url(course, q(course, 0)), {"answer": "2"}, headers=JSON
    ).json()
    assert body["correct"] is False
    assert "Not quite." in body["html"] and "<strong>wte</strong>" in body["html"]
    card = ReviewCard.objects.get(user=learner, question=q(course, 0))
    assert card.due <= timezone.now()


def test_a_right_answer_after_a_wrong_one_reviews_the_card_good(
    client, learner, course
):
    client.force_login(learner)
    client.post(answer_url(course, q(course, 0)), {"answer": "0"}, headers=JSON)
    client.post(answer_url(course, q(course, 0)), {"answer": "1"}, headers=JSON)
    card = ReviewCard.objects.get(user=learner)
    assert card.due > timezone.now()
    assert list(ReviewLog.objects.values_list("rating", flat=True)) == [3]


def test_without_javascript_the_answer_redirects_back_to_its_feedback(
    client, learner, course
):
    client.force_login(learner)
    question = q(course, 1)
    response = client.post(answer_url(course, question), {"answer": "124,439,808"})
    attempt = QuestionAttempt.objects.get()
    assert attempt.correct is True
    assert response.status_code == 302
    assert response.url == (
        f"{course.get_absolute_url()}?checked={attempt.pk}#q-{question.pk}"
    )
    html = client.get(response.url).content.decode()
    assert "Right." in html and "124,439,808" in html and "Counted once" in html


def test_a_reload_shows_the_learners_latest_answers_and_their_feedback(
    client, learner, make_user, course
):
    client.force_login(make_user("otto"))
    client.post(answer_url(course, q(course, 1)), {"answer": "5"})  # not theirs
    client.force_login(learner)
    client.post(answer_url(course, q(course, 0)), {"answer": "0"}, headers=JSON)
    client.post(answer_url(course, q(course, 0)), {"answer": "2"}, headers=JSON)
    client.post(
        answer_url(course, q(course, 2)),
        {"answer": "Because.", "self_rating": "wrong"},
        headers=JSON,
    )
    html = client.get(course.get_absolute_url()).content.decode()
    assert '<input type="radio" name="answer" value="2" checked>' in html
    assert 'value="0" checked' not in html
    assert "You chose <strong>ln_f</strong>" in html and "Not quite." in html
    assert ">Because.</textarea>" in html
    assert 'value="wrong" checked' in html
    assert "You answered" not in html  # the numeric one is someone else's


def test_an_answer_sent_before_logging_in_is_judged_when_back(client, learner, course):
    question = q(course, 1)
    response = client.post(answer_url(course, question), {"answer": "124439808"})
    assert response.url.startswith(reverse("login"))
    assert not QuestionAttempt.objects.exists()
    client.force_login(learner)  # keeps the session, as the log-in form does
    html = client.get(course.get_absolute_url()).content.decode()
    attempt = QuestionAttempt.objects.get()
    assert (attempt.user, attempt.question, attempt.correct) == (
        learner,
        question,
        True,
    )
    assert "You answered <strong>124,439,808</strong>" in html and "Right." in html
    client.get(course.get_absolute_url())  # judged once
    assert QuestionAttempt.objects.count() == 1


def test_an_invalid_answer_sent_before_logging_in_shows_its_message(
    client, learner, course
):
    client.post(answer_url(course, q(course, 1)), {"answer": "lots"})
    client.force_login(learner)
    response = client.get(course.get_absolute_url())
    assert response.status_code == 400
    assert "&#x27;lots&#x27; is not a number." in response.content.decode()
    assert not QuestionAttempt.objects.exists()


def test_someone_elses_attempt_id_shows_no_feedback(client, make_user, course):
    other = make_user("otto")
    client.force_login(other)
    client.post(answer_url(course, q(course, 0)), {"answer": "1"})
    attempt = QuestionAttempt.objects.get()
    client.force_login(make_user("mia"))
    html = client.get(f"{course.get_absolute_url()}?checked={attempt.pk}").content
    assert b"Right." not in html


def test_a_recall_answer_is_self_rated(client, learner, course):
    client.force_login(learner)
    question = q(course, 2)
    body = client.post(
        answer_url(course, question),
        {"answer": "So the head reuses wte.", "self_rating": "wrong"},
        headers=JSON,
    ).json()
    assert body["correct"] is False
    assert "Same vocabulary space." in body["html"]
    attempt = QuestionAttempt.objects.get()
    assert attempt.answer == "So the head reuses wte." and attempt.correct is False
    assert ReviewCard.objects.filter(question=question).exists()


BAD_ANSWERS = [
    (0, {}, "Choose one of the options."),
    (0, {"answer": "7"}, "not one of this question's choices"),
    (0, {"answer": "-1"}, "not one of this question's choices"),
    (0, {"answer": "wte"}, "not one of this question's choices"),
    (0, {"answer": "²"}, "not one of this question's choices"),
    (0, {"answer": "9" * 30}, "not one of this question's choices"),
    (1, {"answer": "nan"}, "finite"),
    (1, {"answer": ""}, "Enter a number."),
    (1, {"answer": "lots"}, "is not a number"),
    (1, {"answer": "inf"}, "finite"),
    (2, {"answer": "x"}, "say whether you got it right"),
    (2, {"answer": "x", "self_rating": "maybe"}, "say whether you got it right"),
    (2, {"answer": "x" * 5001, "self_rating": "right"}, "under 5000 characters"),
]


@pytest.mark.parametrize(("order", "data", "message"), BAD_ANSWERS)
def test_bad_answers_by_fetch_are_a_400_with_a_message_and_no_row(
    client, learner, course, order, data, message
):
    client.force_login(learner)
    response = client.post(answer_url(course, q(course, order)), data, headers=JSON)
    assert response.status_code == 400
    assert message in response.json()["error"]
    assert not QuestionAttempt.objects.exists() and not ReviewCard.objects.exists()


@pytest.mark.parametrize(("order", "data", "message"), BAD_ANSWERS)
def test_bad_answers_without_javascript_show_the_message_on_the_page(
    client, learner, course, order, data, message
):
    client.force_login(learner)
    question = q(course, order)
    response = client.post(answer_url(course, question), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert "<h1>Rich Lesson</h1>" in html
    section = html.split(f'id="q-{question.pk}"')[1].split('class="self-check"')[0]
    assert message.replace("'", "&#x27;") in section
    assert not QuestionAttempt.objects.exists()


def test_a_question_of_another_lesson_or_none_is_refused(client, learner, course):
    client.force_login(learner)
    foreign = Question.objects.exclude(lesson=course).first()
    for question_id in (foreign.pk, 999_999):
        url = reverse("question-answer", args=[course.slug, question_id])
        response = client.post(url, {"answer": "1"}, headers=JSON)
        assert response.status_code == 400
        assert "not part of this lesson" in response.json()["error"]
        page = client.post(url, {"answer": "1"})
        assert page.status_code == 400
        assert "not part of this lesson" in page.content.decode()
    assert not QuestionAttempt.objects.exists()


def test_huge_ids_are_a_4xx_not_a_500(client, learner, course):
    client.force_login(learner)
    huge = 10**30
    assert client.post(f"/review/{huge}/rate/", {"rating": "3"}).status_code == 404
    url = f"/lessons/{course.slug}/questions/{huge}/answer/"
    assert client.post(url, {"answer": "1"}).status_code == 400
    for bad in (huge, "²", "١٢", "-1", "1e3"):
        page = client.get(course.get_absolute_url(), {"checked": bad})
        assert page.status_code == 400, bad
        html = page.content.decode()
        assert "?checked= names no answer" in html and course.title in html


def test_an_unknown_lesson_is_a_404_and_get_is_refused(client, learner, course):
    client.force_login(learner)
    url = reverse("question-answer", args=["nope", q(course, 0).pk])
    assert client.post(url, {"answer": "1"}).status_code == 404
    assert client.get(answer_url(course, q(course, 0))).status_code == 405


# Follow-ups


def test_a_follow_up_shows_a_hint_a_reveal_and_four_ratings(client, learner, course):
    client.force_login(learner)
    html = client.get(course.get_absolute_url()).content.decode()
    assert "Try to answer first" in html
    assert "<summary>Reveal the answer</summary>" in html
    for label in ("Again", "Hard", "Good", "Easy"):
        assert f">{label}</button>" in html


def test_rating_a_follow_up_without_javascript_shows_its_next_review(
    client, learner, course
):
    client.force_login(learner)
    follow_up = course.follow_ups.get()
    response = client.post(rate_url(course, follow_up), {"rating": "3"})
    assert response.status_code == 302
    assert response.url.endswith(f"?rated={follow_up.pk}#f-{follow_up.pk}")
    card = ReviewCard.objects.get(user=learner, follow_up=follow_up)
    assert card.due > timezone.now() and card.reason == "studied"
    html = client.get(response.url).content.decode()
    assert f'<time datetime="{card.due.isoformat()}">' in html
    assert "<details open>" in html


def test_rating_a_follow_up_by_fetch_returns_the_due_date(client, learner, course):
    client.force_login(learner)
    follow_up = course.follow_ups.get()
    response = client.post(rate_url(course, follow_up), {"rating": "1"}, headers=JSON)
    body = response.json()
    card = ReviewCard.objects.get()
    assert body["due"] == card.due.isoformat()
    assert body["message"].startswith("Next review of this follow-up:")
    assert ReviewLog.objects.get().rating == 1


@pytest.mark.parametrize("rating", ["", "0", "5", "great"])
def test_a_bad_follow_up_rating_is_refused(client, learner, course, rating):
    client.force_login(learner)
    follow_up = course.follow_ups.get()
    response = client.post(
        rate_url(course, follow_up), {"rating": rating}, headers=JSON
    )
    assert response.status_code == 400
    assert "Again, Hard, Good or Easy" in response.json()["error"]
    page = client.post(rate_url(course, follow_up), {"rating": rating})
    assert (
        page.status_code == 400 and "Again, Hard, Good or Easy" in page.content.decode()
    )
    assert not ReviewCard.objects.exists()


def test_a_follow_up_of_another_lesson_is_refused(client, learner, course):
    client.force_login(learner)
    foreign = FollowUp.objects.exclude(lesson=course).first()
    url = reverse("follow-up-rate", args=[course.slug, foreign.pk])
    response = client.post(url, {"rating": "3"}, headers=JSON)
    assert response.status_code == 400
    assert "not part of this lesson" in response.json()["error"]
    assert not ReviewCard.objects.exists()


# Query counts


@pytest.mark.parametrize("size", [1, 5])
def test_the_lesson_page_queries_do_not_grow_with_its_items(
    client, learner, content_tree, django_assert_max_num_queries, size
):
    content_tree.lesson(
        "basics",
        4,
        "sized",
        follow_ups=[{"question": f"F{i}?", "answer": f"A{i}."} for i in range(size)],
        questions=[
            {"kind": "choice", "prompt": f"Q{i}", "choices": ["a", "b"], "answer": 0}
            for i in range(size)
        ],
    )
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="sized")
    client.force_login(learner)
    for follow_up in lesson.follow_ups.all():
        client.post(rate_url(lesson, follow_up), {"rating": "3"})
    for question in lesson.questions.all():
        client.post(answer_url(lesson, question), {"answer": "1"})
    attempt = QuestionAttempt.objects.first()
    # session, user, lesson, follow-ups, questions, exercises, read upsert,
    # cards, latest answers, exam mode (sitting a quiz?), nav due count
    with django_assert_max_num_queries(12):
        response = client.get(f"{lesson.get_absolute_url()}?checked={attempt.pk}")
    assert response.status_code == 200
    assert response.content.decode().count(">Again</button>") == size
