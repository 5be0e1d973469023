"""Progress: per-section bars and "continue" on home, /progress/, the export."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.urls import reverse
from django.utils import timezone
from fsrs import Rating

from grader.models import Exercise, Submission
from quiz.content.loader import content_load
from quiz.learning import progress, review
from quiz.models import Lesson, LessonRead, QuestionAttempt, ReviewLog

pytestmark = pytest.mark.django_db


@pytest.fixture
def course(content_tree):
    content_load(root=content_tree.root)
    return {lesson.slug: lesson for lesson in Lesson.objects.all()}


def make_exercise(slug: str) -> Exercise:
    return Exercise.objects.create(
        slug=slug,
        title=slug,
        harness="tie-weights",
        entry_point="f",
        signature="f()",
        prompt="p",
        starter="s",
        solution="def f(): pass",
    )


def submit(user, exercise, status):
    return Submission.objects.create(
        user=user, exercise=exercise, code="def f(): pass", seed=1, status=status
    )


def days_ago(n: int) -> dt.datetime:
    return timezone.now() - dt.timedelta(days=n)


# Home


def test_home_shows_progress_bars_and_start_for_a_new_learner(client, learner, course):
    client.force_login(learner)
    html = client.get(reverse("home")).content.decode()
    assert 'value="0" max="2"' in html and "0 of 2 read" in html
    assert 'value="0" max="1"' in html and "0 of 1 read" in html
    start = reverse("lesson", args=["first-lesson"])
    assert f'<a class="button" href="{start}">Start: First Lesson</a>' in html


def test_home_moves_the_bar_and_continues_after_the_latest_read(
    client, learner, course
):
    client.force_login(learner)
    client.get(course["first-lesson"].get_absolute_url())
    html = client.get(reverse("home")).content.decode()
    assert 'value="1" max="2"' in html and "1 of 2 read" in html
    nxt = reverse("lesson", args=["second-lesson"])
    assert f'<a class="button" href="{nxt}">Continue: Second Lesson</a>' in html


def test_continue_skips_read_lessons_and_wraps_around(course):
    lessons = sorted(course.values(), key=lambda les: (les.section.order, les.order))
    first, second, third = lessons
    now = timezone.now()
    reads = {third.pk: now, second.pk: now - dt.timedelta(hours=1)}
    assert progress.lesson_to_continue(lessons=lessons, reads=reads) == first
    reads = {first.pk: now, second.pk: now - dt.timedelta(hours=1)}
    assert progress.lesson_to_continue(lessons=lessons, reads=reads) == third
    reads = {les.pk: now for les in lessons}
    assert progress.lesson_to_continue(lessons=lessons, reads=reads) is None
    assert progress.lesson_to_continue(lessons=[], reads={}) is None


def test_a_learner_who_read_everything_is_sent_to_review(client, learner, course):
    client.force_login(learner)
    for lesson in course.values():
        client.get(lesson.get_absolute_url())
    html = client.get(reverse("home")).content.decode()
    assert "You have read every lesson" in html
    assert "2 of 2 read" in html and "1 of 1 read" in html


def test_anonymous_home_has_no_progress(client, course):
    html = client.get(reverse("home")).content.decode()
    assert "<progress" not in html and "Continue" not in html


@pytest.mark.parametrize("lessons_per_section", [1, 6])
def test_home_queries_do_not_grow_with_lessons(
    client, learner, content_tree, django_assert_max_num_queries, lessons_per_section
):
    for order in range(3, 3 + lessons_per_section):
        content_tree.lesson("advanced", order, f"extra-{order}")
    content_load(root=content_tree.root)
    client.force_login(learner)
    for lesson in Lesson.objects.all():
        client.get(lesson.get_absolute_url())
    # session, user, sections, lessons, reads, nav due count, open assignments,
    # open quizzes, the header's instructor check
    with django_assert_max_num_queries(9):
        response = client.get(reverse("home"))
    assert response.status_code == 200


# The progress page


def test_progress_needs_a_login(client):
    assert client.get(reverse("progress")).status_code == 302
    assert client.get(reverse("progress-export")).status_code == 302


def test_progress_counts_move_with_activity(client, learner, course):
    client.force_login(learner)

    def stats():
        html = client.get(reverse("progress")).content.decode()
        return {
            name: html.split(f'id="stat-{name}">')[1].split("</dd>")[0]
            for name in ("lessons", "questions", "exercises", "due", "streak")
        }

    before = stats()
    assert before["lessons"] == "0 of 3" and before["questions"] == "0 of 9"
    assert before["streak"] == "0 days"

    lesson = course["first-lesson"]
    client.get(lesson.get_absolute_url())
    choice = lesson.questions.get(order=0)
    url = reverse("question-answer", args=[lesson.slug, choice.pk])
    client.post(url, {"answer": "0"})  # wrong: card due
    numeric = lesson.questions.get(order=1)
    client.post(
        reverse("question-answer", args=[lesson.slug, numeric.pk]),
        {"answer": "7087872"},
    )
    exercise = make_exercise("ex-a")
    submit(learner, exercise, "failed")
    submit(learner, exercise, "passed")
    submit(learner, exercise, "passed")
    submit(learner, make_exercise("ex-b"), "failed")

    after = stats()
    assert after["lessons"] == "1 of 3"
    assert after["questions"] == "1 of 9"
    assert after["exercises"] == "1 of 2"  # ex-a passed; ex-b failed
    hidden = make_exercise("ex-c")
    submit(learner, hidden, "passed")
    hidden.published = False  # an unpublished one is neither passed nor total
    hidden.save()
    assert stats()["exercises"] == "1 of 2"
    assert ">1</a>" in after["due"]
    assert after["streak"] == "1 day"

    client.post(url, {"answer": "1"})  # now right: latest attempt counts
    assert stats()["questions"] == "2 of 9"
    client.post(url, {"answer": "0"})
    assert stats()["questions"] == "1 of 9"


def test_the_streak_counts_consecutive_days_ending_today_or_yesterday(learner, course):
    today = timezone.localdate()
    d = dt.timedelta(days=1)
    assert progress.streak_count(days=set(), today=today) == 0
    assert (
        progress.streak_count(days={today, today - d, today - 2 * d}, today=today) == 3
    )
    assert progress.streak_count(days={today - d, today - 2 * d}, today=today) == 2
    assert progress.streak_count(days={today - 2 * d, today - 3 * d}, today=today) == 0
    assert progress.streak_count(days={today, today - 2 * d}, today=today) == 1


def test_every_kind_of_activity_feeds_the_streak(learner, course):
    lesson = course["first-lesson"]
    progress.lesson_read_record(user=learner, lesson=lesson)
    LessonRead.objects.update(first_read_at=days_ago(3), last_read_at=days_ago(3))
    progress.question_attempt_create(
        user=learner, question=lesson.questions.get(order=0), data={"answer": "0"}
    )
    QuestionAttempt.objects.update(created_at=days_ago(2))
    review.follow_up_rate(
        user=learner, follow_up=lesson.follow_ups.get(), rating=Rating.Good
    )
    ReviewLog.objects.update(reviewed_at=days_ago(1))
    assert progress.progress_summary(user=learner).streak == 3  # idle today
    submit(learner, make_exercise("ex"), "queued")
    assert progress.progress_summary(user=learner).streak == 4
    QuestionAttempt.objects.update(created_at=days_ago(9))
    assert progress.progress_summary(user=learner).streak == 2


def test_the_timeline_counts_each_kind_per_day_for_30_days(learner, course):
    lesson = course["first-lesson"]
    question = lesson.questions.get(order=0)
    for _ in range(3):
        progress.question_attempt_create(
            user=learner, question=question, data={"answer": "1"}
        )
    QuestionAttempt.objects.filter(
        pk=QuestionAttempt.objects.order_by("pk").first().pk
    ).update(created_at=days_ago(29))
    progress.question_attempt_create(
        user=learner, question=question, data={"answer": "1"}
    )
    QuestionAttempt.objects.filter(
        pk=QuestionAttempt.objects.order_by("-pk").first().pk
    ).update(created_at=days_ago(30))  # out of the window
    progress.lesson_read_record(user=learner, lesson=lesson)

    timeline = progress.activity_timeline(user=learner, today=timezone.localdate())

    assert len(timeline.days) == 30 and timeline.days[-1] == timezone.localdate()
    series = dict(timeline.series)
    assert series["self-check answers"][-1] == 2
    assert series["self-check answers"][0] == 1
    assert sum(series["self-check answers"]) == 3
    assert series["lessons opened"][-1] == 1
    assert timeline.rows()[-1][2] == 3


def test_the_progress_page_has_a_data_table_and_a_chart_when_chart_js_exists(
    client, learner, course, monkeypatch
):
    from quiz.learning import views as learner_views

    client.force_login(learner)
    client.get(course["first-lesson"].get_absolute_url())
    html = client.get(reverse("progress")).content.decode()
    assert '<table id="activity-table">' in html
    assert html.count('<tr><th scope="row">') == 30
    assert 'id="activity-data"' in html  # the chart's numbers, as JSON
    monkeypatch.setattr(learner_views.finders, "find", lambda path: "/x/" + path)
    html = client.get(reverse("progress")).content.decode()
    assert '<canvas id="activity-chart" role="img" aria-label=' in html
    assert "vendor/chart.umd.js" in html
    monkeypatch.setattr(learner_views.finders, "find", lambda path: None)
    html = client.get(reverse("progress")).content.decode()
    assert "<canvas" not in html and "chart.umd.js" not in html


@pytest.mark.parametrize("size", [1, 8])
def test_progress_page_queries_do_not_grow_with_history(
    client, learner, content_tree, django_assert_max_num_queries, size
):
    for order in range(3, 3 + size):
        content_tree.lesson("advanced", order, f"extra-{order}")
    content_load(root=content_tree.root)
    client.force_login(learner)
    exercise = make_exercise("ex")
    for lesson in Lesson.objects.all():
        client.get(lesson.get_absolute_url())
        for question in lesson.questions.all():
            progress.question_attempt_create(
                user=learner,
                question=question,
                data={"answer": "0", "self_rating": "wrong"},
            )
        submit(learner, exercise, "passed")
    # session, user, nav, 4 totals (exercises too), right, passed, due, streak,
    # 4 timeline, regrade notes, My grades (the learner's assignments, quizzes)
    with django_assert_max_num_queries(19):
        response = client.get(reverse("progress"))
    assert response.status_code == 200


# Export


def test_the_export_holds_all_and_only_the_learners_own_data(
    client, learner, make_user, course
):
    lesson = course["first-lesson"]
    other = make_user("otto")
    for user in (learner, other):
        progress.lesson_read_record(user=user, lesson=lesson)
        progress.question_attempt_create(
            user=user, question=lesson.questions.get(order=1), data={"answer": "12"}
        )
        review.follow_up_rate(
            user=user, follow_up=lesson.follow_ups.get(), rating=Rating.Hard
        )
    exercise = make_exercise("ex")
    mine = submit(learner, exercise, "failed")
    Submission.objects.filter(pk=mine.pk).update(
        score=0.5, checks=[{"name": "shape", "passed": False, "message": "m"}]
    )
    submit(other, exercise, "passed")
    client.force_login(learner)

    response = client.get(reverse("progress-export"))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    data = json.loads(response.content)
    assert data["user"]["username"] == "lea"
    assert [r["lesson"] for r in data["lesson_reads"]] == ["first-lesson"]
    assert data["question_attempts"] == [
        {
            "lesson": "first-lesson",
            "question": "How many parameters per block?",
            "answer": "12",
            "correct": False,
            "created_at": QuestionAttempt.objects.get(
                user=learner
            ).created_at.isoformat(),
        }
    ]
    cards = {c.get("follow_up") or c.get("question"): c for c in data["review_cards"]}
    assert cards["Why?"]["reviews"][0]["rating"] == 2
    assert cards["Why?"]["state"]["stability"] is not None
    assert cards["How many parameters per block?"]["reviews"] == []
    assert len(data["submissions"]) == 1
    sub = data["submissions"][0]
    assert sub["id"] == str(mine.pk) and sub["code"] == "def f(): pass"
    assert (sub["status"], sub["score"]) == ("failed", 0.5)
    assert sub["checks"][0]["name"] == "shape"
