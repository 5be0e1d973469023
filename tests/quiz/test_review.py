"""Spaced review: FSRS scheduling of follow-ups and self-checks, and /review/."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone
from fsrs import Rating

from quiz.content.loader import content_load
from quiz.learning import review
from quiz.models import ReviewCard, ReviewLog

pytestmark = pytest.mark.django_db


@pytest.fixture
def lessons(content_tree):
    content_tree.lesson(
        "basics",
        3,
        "many-follow-ups",
        follow_ups=[
            {"question": f"Why {i}?", "answer": f"Because {i}."} for i in range(3)
        ],
    )
    content_load(root=content_tree.root)
    from quiz.models import Lesson

    return {lesson.slug: lesson for lesson in Lesson.objects.all()}


def follow_ups_of(lesson):
    return list(lesson.follow_ups.order_by("order"))


# cards_schedule (called by the exercise pages after a failed check)


def test_cards_schedule_creates_due_cards_for_new_follow_ups(learner, lessons):
    follow_ups = follow_ups_of(lessons["many-follow-ups"])
    before = timezone.now()

    count = review.cards_schedule(
        user=learner, follow_ups=follow_ups, reason=ReviewCard.Reason.EXERCISE
    )

    assert count == 3
    cards = ReviewCard.objects.filter(user=learner)
    assert {c.follow_up_id for c in cards} == {f.pk for f in follow_ups}
    for card in cards:
        assert card.reason == "exercise"
        assert before <= card.due <= timezone.now()
        assert card.state["due"] == card.due.isoformat()
    assert review.cards_due(user=learner).count() == 3


def test_cards_schedule_pulls_a_future_card_forward_and_skips_due_ones(
    learner, lessons
):
    first, second, third = follow_ups_of(lessons["many-follow-ups"])
    rated = review.follow_up_rate(user=learner, follow_up=first, rating=Rating.Easy)
    assert rated.due > timezone.now()
    review.cards_schedule(user=learner, follow_ups=[second], reason="studied")

    count = review.cards_schedule(
        user=learner, follow_ups=[first, second, third], reason="exercise"
    )

    # first moved forward, second already due (not counted), third created
    assert count == 2
    first_card = ReviewCard.objects.get(user=learner, follow_up=first)
    assert first_card.due <= timezone.now()
    assert first_card.reason == "exercise"
    assert first_card.state["stability"] == rated.state["stability"]
    assert ReviewCard.objects.get(user=learner, follow_up=second).reason == "studied"
    assert ReviewCard.objects.filter(user=learner).count() == 3


def test_cards_schedule_is_per_learner_and_idempotent(make_user, learner, lessons):
    other = make_user("otto")
    follow_ups = follow_ups_of(lessons["many-follow-ups"])
    assert (
        review.cards_schedule(user=learner, follow_ups=follow_ups, reason="exercise")
        == 3
    )
    assert (
        review.cards_schedule(user=learner, follow_ups=follow_ups, reason="exercise")
        == 0
    )
    assert (
        review.cards_schedule(user=other, follow_ups=follow_ups[:1], reason="exercise")
        == 1
    )
    assert ReviewCard.objects.filter(user=learner).count() == 3
    assert ReviewCard.objects.filter(user=other).count() == 1


def test_cards_schedule_accepts_a_queryset_and_nothing(learner, lessons):
    lesson = lessons["many-follow-ups"]
    assert review.cards_schedule(user=learner, follow_ups=[], reason="exercise") == 0
    assert (
        review.cards_schedule(
            user=learner, follow_ups=lesson.follow_ups.all(), reason="exercise"
        )
        == 3
    )


def test_cards_schedule_rejects_an_unknown_reason(learner, lessons):
    with pytest.raises(ValueError, match="unknown review reason"):
        review.cards_schedule(
            user=learner, follow_ups=follow_ups_of(lessons["first-lesson"]), reason="x"
        )
    assert not ReviewCard.objects.exists()


# Rating through FSRS


def test_rating_a_follow_up_reviews_its_card_and_logs_it(learner, lessons):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    card = review.follow_up_rate(user=learner, follow_up=follow_up, rating=Rating.Good)
    assert card.due > timezone.now()
    assert card.state["last_review"] is not None
    assert ReviewLog.objects.get(card=card).rating == 3

    again = review.follow_up_rate(
        user=learner, follow_up=follow_up, rating=Rating.Again
    )
    assert again.pk == card.pk
    assert again.due < card.due  # Again brings it back sooner
    assert list(
        ReviewLog.objects.filter(card=card).values_list("rating", flat=True)
    ) == [
        1,
        3,
    ]


def test_easy_schedules_further_out_than_hard(make_user, lessons):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    hard = review.follow_up_rate(
        user=make_user("h"), follow_up=follow_up, rating=Rating.Hard
    )
    easy = review.follow_up_rate(
        user=make_user("e"), follow_up=follow_up, rating=Rating.Easy
    )
    assert easy.due - hard.due > dt.timedelta(hours=12)


@pytest.mark.parametrize("raw", ["0", "5", "", None, "meh", "2.5"])
def test_a_bad_rating_is_refused(raw):
    with pytest.raises(review.RatingInvalid):
        review.rating_parse(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", Rating.Again),
        ("hard", Rating.Hard),
        ("Good", Rating.Good),
        (4, Rating.Easy),
    ],
)
def test_ratings_parse_from_numbers_and_names(raw, expected):
    assert review.rating_parse(raw) == expected


def test_a_wrong_answer_card_is_due_now_and_a_right_one_reviews_it(learner, lessons):
    question = lessons["first-lesson"].questions.get(order=0)
    assert review.question_card_review_good(user=learner, question=question) is None
    card = review.question_card_schedule(user=learner, question=question)
    assert card.due <= timezone.now()
    reviewed = review.question_card_review_good(user=learner, question=question)
    assert reviewed.due > timezone.now()
    assert ReviewLog.objects.get(card=card).rating == 3
    # a second wrong answer pulls it back to now
    again = review.question_card_schedule(user=learner, question=question)
    assert again.due <= timezone.now()
    assert ReviewCard.objects.filter(user=learner).count() == 1


def test_next_due_is_the_earliest_future_card(learner, lessons):
    follow_ups = follow_ups_of(lessons["many-follow-ups"])
    assert review.card_next_due(user=learner) is None
    easy = review.follow_up_rate(
        user=learner, follow_up=follow_ups[0], rating=Rating.Easy
    )
    hard = review.follow_up_rate(
        user=learner, follow_up=follow_ups[1], rating=Rating.Hard
    )
    assert review.card_next_due(user=learner) == min(easy.due, hard.due)
    assert review.cards_due_count(user=learner) == 0


# The review page


def test_review_needs_a_login(client):
    response = client.get(reverse("review"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_review_lists_due_cards_with_their_answers(client, learner, lessons):
    follow_ups = follow_ups_of(lessons["many-follow-ups"])
    review.cards_schedule(user=learner, follow_ups=follow_ups[:2], reason="exercise")
    question = lessons["first-lesson"].questions.get(order=1)
    review.question_card_schedule(user=learner, question=question)
    client.force_login(learner)

    html = client.get(reverse("review")).content.decode()

    assert "3 cards due" in html
    assert "Why 0?" in html and "Because 0." in html and "Why 1?" in html
    assert "Why 2?" not in html
    assert "How many parameters per block?" in html and "7,087,872" in html
    assert "a failed exercise check" in html.lower()
    assert html.count('name="rating"') == 3 * 4


def test_the_empty_review_page_says_when_the_next_card_is_due(client, learner, lessons):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    card = review.follow_up_rate(user=learner, follow_up=follow_up, rating=Rating.Good)
    client.force_login(learner)
    html = client.get(reverse("review")).content.decode()
    assert "Nothing is due" in html
    assert f'datetime="{card.due.isoformat()}"' in html


def test_rating_on_the_review_page_reschedules_the_card(client, learner, lessons):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    review.cards_schedule(user=learner, follow_ups=[follow_up], reason="exercise")
    card = ReviewCard.objects.get(user=learner)
    client.force_login(learner)

    response = client.post(reverse("review-rate", args=[card.pk]), {"rating": "3"})

    assert response.status_code == 302 and response.url == reverse("review")
    card.refresh_from_db()
    assert card.due > timezone.now()
    assert ReviewLog.objects.filter(card=card, rating=3).exists()
    html = client.get(response.url).content.decode()
    assert "Next review of" in html and "Nothing is due" in html


def test_rating_by_fetch_returns_the_next_due_date(client, learner, lessons):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    review.cards_schedule(user=learner, follow_ups=[follow_up], reason="exercise")
    card = ReviewCard.objects.get(user=learner)
    client.force_login(learner)
    response = client.post(
        reverse("review-rate", args=[card.pk]),
        {"rating": "easy"},
        headers={"accept": "application/json"},
    )
    assert response.status_code == 200
    body = response.json()
    card.refresh_from_db()
    assert body["due"] == card.due.isoformat()
    assert body["due_count"] == 0
    assert "Next review" in body["message"]


@pytest.mark.parametrize("rating", ["0", "9", "", "soon"])
def test_a_bad_rating_on_the_review_page_is_a_clear_400(
    client, learner, lessons, rating
):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    review.cards_schedule(user=learner, follow_ups=[follow_up], reason="exercise")
    card = ReviewCard.objects.get(user=learner)
    client.force_login(learner)
    response = client.post(
        reverse("review-rate", args=[card.pk]),
        {"rating": rating},
        headers={"accept": "application/json"},
    )
    assert response.status_code == 400
    assert "Again, Hard, Good or Easy" in response.json()["error"]
    assert not ReviewLog.objects.exists()
    no_js = client.post(reverse("review-rate", args=[card.pk]), {"rating": rating})
    assert no_js.status_code == 400
    assert "Again, Hard, Good or Easy" in no_js.content.decode()


def test_another_learners_card_cannot_be_rated(client, make_user, learner, lessons):
    follow_up = follow_ups_of(lessons["first-lesson"])[0]
    review.cards_schedule(user=learner, follow_ups=[follow_up], reason="exercise")
    card = ReviewCard.objects.get(user=learner)
    client.force_login(make_user("mallory"))
    response = client.post(reverse("review-rate", args=[card.pk]), {"rating": "4"})
    assert response.status_code == 404
    assert not ReviewLog.objects.exists()


def test_the_nav_shows_the_due_count(client, learner, lessons):
    review.cards_schedule(
        user=learner,
        follow_ups=follow_ups_of(lessons["many-follow-ups"]),
        reason="exercise",
    )
    client.force_login(learner)
    html = client.get(reverse("home")).content.decode()
    assert 'Review <span class="badge" id="nav-due-count">3</span>' in html


@pytest.mark.parametrize("size", [2, 12])
def test_review_page_queries_do_not_grow_with_cards(
    client, learner, content_tree, django_assert_max_num_queries, size
):
    follow_ups = [{"question": f"Why {i}?", "answer": f"B{i}."} for i in range(size)]
    content_tree.lesson("basics", 3, "big", follow_ups=follow_ups)
    content_load(root=content_tree.root)
    from quiz.models import FollowUp, Question

    review.cards_schedule(
        user=learner, follow_ups=FollowUp.objects.all(), reason="exercise"
    )
    for question in Question.objects.all():
        review.question_card_schedule(user=learner, question=question)
    client.force_login(learner)
    # session, user, exam mode (sitting a quiz?), cards, nav due count
    with django_assert_max_num_queries(6):
        response = client.get(reverse("review"))
    assert response.status_code == 200


def test_cards_schedule_changes_at_most_limit_cards_and_skips_due_ones(
    learner, lessons
):
    follow_ups = [f for lesson in lessons.values() for f in lesson.follow_ups.all()]
    assert len(follow_ups) >= 3
    review.cards_schedule(user=learner, follow_ups=follow_ups[:1], reason="studied")
    count = review.cards_schedule(
        user=learner, follow_ups=follow_ups, reason="exercise", limit=1
    )
    assert count == 1  # the first is already due: the second is the one added
    carded = set(
        ReviewCard.objects.filter(user=learner).values_list("follow_up", flat=True)
    )
    assert carded == {follow_ups[0].pk, follow_ups[1].pk}
