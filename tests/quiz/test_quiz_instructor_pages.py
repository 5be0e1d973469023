"""The instructor's quiz pages: create by form, results, variants, analysis, regrade."""

from __future__ import annotations

import pytest
from django.test import Client

from quiz.models import Question
from teaching.models import Quiz, QuizAccommodation
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import (
    create,
    quiz_form,
    right_answers,
    scored_questions,
    sit,
)

pytestmark = pytest.mark.django_db


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


form = quiz_form


def test_an_instructor_creates_a_quiz_with_the_form(world, quiz_course):
    cohort = world.cohort.pk
    page = browser(world.owner).get(f"/instructor/cohorts/{cohort}/quizzes/new/")
    assert page.status_code == 200 and b"params-of-a-model" in page.content
    made = browser(world.owner).post(
        f"/instructor/cohorts/{cohort}/quizzes/new/", form()
    )
    quiz = Quiz.objects.get(title="Counting quiz")
    assert (
        made.status_code == 302
        and made["Location"] == f"/instructor/quizzes/{quiz.pk}/"
    )
    slots = [(s.points, s.draw, s.pool) for s in quiz.slots.all()]
    assert slots == [
        (2.0, 1, {"templates": ["params-of-a-model"]}),
        (1.0, 2, {"lessons": ["first-lesson"]}),
    ]
    assert (quiz.time_limit, quiz.feedback) == (20, "after_close")
    listed = browser(world.owner).get(f"/instructor/cohorts/{cohort}/quizzes/")
    assert b"Counting quiz" in listed.content
    bad = browser(world.owner).post(
        f"/instructor/cohorts/{cohort}/quizzes/new/", form(slots="two: lesson:x")
    )
    assert bad.status_code == 400 and b"Line 1" in bad.content
    assert b"two: lesson:x" in bad.content  # what was typed stays in the form
    # A learner or another instructor does not get the pages.
    assert browser(world.lea).get(f"/instructor/quizzes/{quiz.pk}/").status_code in (
        302,
        403,
        404,
    )
    assert (
        browser(world.other).get(f"/instructor/quizzes/{quiz.pk}/").status_code == 404
    )


def test_the_quiz_page_lists_results_and_saves_accommodations(world, quiz_course):
    quiz = create(world, shuffle=False)
    sit(world.lea, quiz["id"], right_answers)
    page = browser(world.owner).get(f"/instructor/quizzes/{quiz['id']}/")
    assert page.status_code == 200
    text = page.content.decode()
    # In percent, as every page writes a score (quiz.templatetags.scores).
    assert "lea" in text and '<td class="score total">100%</td>' in text
    saved = browser(world.owner).post(
        f"/instructor/quizzes/{quiz['id']}/accommodations/",
        {"learner": "leo", "time_factor": "1.5", "closes_at": "", "tz": "UTC"},
    )
    assert saved.status_code == 302
    assert QuizAccommodation.objects.get(learner=world.leo).time_factor == 1.5
    refused = browser(world.owner).post(
        f"/instructor/quizzes/{quiz['id']}/accommodations/",
        {"learner": "leo", "time_factor": "fast", "tz": "UTC"},
        follow=True,
    )
    assert b"a number such as 1.5" in refused.content


def test_variants_show_several_draws_with_their_keys(world, quiz_course):
    quiz = create(world)
    page = browser(world.owner).get(f"/instructor/quizzes/{quiz['id']}/variants/")
    text = page.content.decode()
    assert page.status_code == 200
    assert text.count("Parameters of a model") == 3  # three draws of the template
    assert "counted the tied head twice" in text and "(right)" in text


def test_statistics_page_draws_the_chart_and_names_flags(world, quiz_course):
    quiz = create(world, shuffle=False)
    sit(world.lea, quiz["id"], right_answers)
    sit(world.leo, quiz["id"], right_answers)
    page = browser(world.owner).get(f"/instructor/quizzes/{quiz['id']}/statistics/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "<svg" in text and text.count("<circle") == 3
    assert "too-easy" in text and "2 submitted attempts" in text


def test_regrade_from_the_page_reports_the_changed_score(world, quiz_course):
    quiz = create(world, shuffle=False)
    numeric = scored_questions()["numeric"]

    def off_by_one(attempt_id):
        answers = right_answers(attempt_id)
        answers["3"] = str(int(numeric.numeric_answer) + 1)
        return answers

    sit(world.leo, quiz["id"], off_by_one)
    Question.objects.filter(pk=numeric.pk).update(tolerance=1)
    done = browser(world.owner).post(
        f"/instructor/quizzes/{quiz['id']}/regrade/", follow=True
    )
    text = done.content.decode()
    assert "<strong>1</strong> of 1 attempts changed" in text
    assert "75%" in text and "100%" in text
