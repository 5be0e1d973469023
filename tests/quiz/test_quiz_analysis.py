"""Item analysis and regrade of a real quiz, through the API.

The arithmetic is proved on a hand-worked data set in
test_quiz_statistics.py; here: attempts become the right responses, a
wrong numeric answer is traced to its misconception, diagnosis and lesson,
and a regrade rescoring every attempt keeps the old scores.
"""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client

from quiz.models import Question
from teaching.models import QuizAttempt
from teaching.quizzes.bank import Bank, Drawn, WrongAnswer
from teaching.quizzes.item_analysis import report as item_report
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import (
    api,
    create,
    keys,
    right_answers,
    scored_questions,
    sit,
)

pytestmark = pytest.mark.django_db


def template_number(attempt_id: int) -> int:
    return next(n for n, d in keys(attempt_id).items() if d.ref.startswith("t:"))


def test_statistics_name_the_misconception_behind_a_wrong_number(
    world, quiz_course, make_user
):
    quiz = create(world, shuffle=False)

    def head_counted_twice(attempt_id):
        answers = right_answers(attempt_id)
        drawn = keys(attempt_id)[template_number(attempt_id)]
        answers[str(template_number(attempt_id))] = str(drawn.wrong[0].number)
        return answers

    sit(world.lea, quiz["id"], right_answers)
    sit(world.leo, quiz["id"], head_counted_twice)
    stats = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").json()
    assert stats["attempts"] == 2
    slot1 = next(s for s in stats["slots"] if s["label"] == "1")
    assert slot1["facility"] == 0.5
    (question,) = slot1["questions"]
    assert question["title"] == "Parameters of a model"
    (seen,) = question["misconceptions"]
    assert seen["text"] == "50% gave the answer of: counted the tied head twice"
    assert seen["diagnosis"] == "tied-head-counted-twice"
    assert [le["slug"] for le in seen["lessons"]] == ["first-lesson"]
    # The choice self-check: both right, but 2 responses are too few to call
    # it too easy; the API says so, and says the minimum.
    slot2 = next(s for s in stats["slots"] if s["label"] == "2")
    (choice,) = slot2["questions"]
    assert (choice["flags"], choice["flags_withheld"]) == ([], True)
    assert choice["note"] == "too few responses (n < 5) to flag"
    assert stats["min_responses_to_flag"] == 5
    text = (
        api(world.owner)
        .get(f"/api/v1/quizzes/{quiz['id']}/statistics/?format=csv")
        .content.decode()
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 1 + 3 and rows[0][:4] == ["item", "slot", "question", "title"]
    # A learner of the cohort is refused (403), other instructors see nothing.
    assert (
        api(world.lea).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").status_code
        == 403
    )
    assert (
        api(world.other).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").status_code
        == 404
    )


def test_a_regrade_rescores_every_attempt_and_reports_the_old_scores(
    world, quiz_course
):
    quiz = create(world, shuffle=False)
    numeric = scored_questions()["numeric"]
    lea = sit(world.lea, quiz["id"], right_answers)

    def off_by_one(attempt_id):
        answers = right_answers(attempt_id)
        answers["3"] = str(int(numeric.numeric_answer) + 1)
        return answers

    leo = sit(world.leo, quiz["id"], off_by_one)
    assert (lea.score, leo.score) == (1.0, 0.75)
    # The instructor widens the tolerance: leo's answer is now right.
    Question.objects.filter(pk=numeric.pk).update(tolerance=1)
    report = api(world.owner).post(f"/api/v1/quizzes/{quiz['id']}/regrade/").json()
    assert (report["total"], report["changed"]) == (2, 1)
    (change,) = report["changes"]
    assert change["learner"] == "leo" and change["questions"] == [3]
    assert (change["old_score"], change["new_score"]) == (0.75, 1.0)
    assert QuizAttempt.objects.get(pk=leo.pk).score == 1.0
    results = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/results/").json()
    assert {r["learner"]: r["score"] for r in results["learners"]}["leo"] == 1.0
    again = api(world.owner).post(f"/api/v1/quizzes/{quiz['id']}/regrade/").json()
    assert again["changed"] == 0


def stats_of(world, quiz) -> dict:
    return api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/statistics/").json()


def by_item(stats) -> dict[int, dict]:
    return {q["item"]: q for s in stats["slots"] for q in s["questions"]}


def test_items_are_numbered_and_named_by_their_question_as_in_the_csv(
    world, quiz_course
):
    quiz = create(world)  # shuffled: the items still follow the quiz's order
    sit(world.lea, quiz["id"], right_answers)
    sit(world.leo, quiz["id"], right_answers)
    stats = stats_of(world, quiz)
    items = by_item(stats)
    # The template by its title; the two self-checks of one lesson by their
    # prompts (both used to be "First Lesson"), the lesson beside them.
    assert [(n, q["title"]) for n, q in items.items()] == [
        (1, "Parameters of a model"),
        (2, "Pick one."),
        (3, "How many parameters per block?"),
    ]
    assert [s["label"] for s in stats["slots"]] == ["1", "2", "3"]
    assert (items[2]["prompt"], items[2]["source"]) == ("Pick one.", "First Lesson")
    assert (items[2]["varies"], items[3]["varies"]) == (False, False)
    # The template draws its numbers per learner: no learner's variant is
    # shown as the question.
    assert (items[1]["varies"], items[1]["prompt"]) == (True, "")
    text = (
        api(world.owner)
        .get(f"/api/v1/quizzes/{quiz['id']}/statistics/?format=csv")
        .content.decode()
    )
    rows = list(csv.reader(io.StringIO(text)))
    assert [row[:4] for row in rows[1:]] == [
        ["1", "1", items[1]["question"], "Parameters of a model"],
        ["2", "2", items[2]["question"], "Pick one."],
        ["3", "3", items[3]["question"], "How many parameters per block?"],
    ]


def test_mean_is_a_score_like_the_results_with_points_beside_it(world, quiz_course):
    quiz = create(world, shuffle=False)
    numeric = scored_questions()["numeric"]

    def numeric_wrong(attempt_id):
        answers = right_answers(attempt_id)
        answers["3"] = str(int(numeric.numeric_answer) + 1)
        return answers

    lea = sit(world.lea, quiz["id"], right_answers)
    leo = sit(world.leo, quiz["id"], numeric_wrong)
    # 4 of 4 points and 3 of 4: scores 1 and 0.75, mean 0.875 = 3.5 of 4.
    assert (lea.score, leo.score) == (1.0, 0.75)
    stats = stats_of(world, quiz)
    assert (stats["mean"], stats["mean_points"], stats["possible"]) == (
        0.875,
        3.5,
        4.0,
    )
    results = api(world.owner).get(f"/api/v1/quizzes/{quiz['id']}/results/").json()
    scores = [r["score"] for r in results["learners"] if r["score"] is not None]
    assert stats["mean"] == sum(scores) / len(scores)
    # sd of 4 and 3 points: sqrt(1/2) = 0.7071 points, 0.1768 of the 4.
    assert (stats["sd_points"], stats["sd"]) == (0.7071, 0.1768)


def test_an_item_never_recorded_is_shown_with_no_responses(world, quiz_course):
    quiz = create(world, shuffle=False)
    attempts = [
        sit(world.lea, quiz["id"], right_answers),
        sit(world.leo, quiz["id"], right_answers),
    ]
    # Nobody answered the template and its result was never recorded (None,
    # as for a dropped question; or a results list cut short).
    for attempt, results in zip(attempts, ([None, 1.0, 1.0], [None]), strict=True):
        attempt.answers.pop("1", None)
        QuizAttempt.objects.filter(pk=attempt.pk).update(
            answers=attempt.answers, results=results
        )
    stats = stats_of(world, quiz)
    template = by_item(stats)[1]
    assert template["title"] == "Parameters of a model"
    assert (template["n"], template["not_recorded"]) == (0, 2)
    assert template["note"] == "no responses"
    assert template["facility"] is None
    # leo's self-checks were not recorded either: 3 + 2 left out.
    assert stats["not_recorded"] == 4
    assert by_item(stats)[2]["n"] == 1
    page = Client()
    page.force_login(world.owner)
    html = page.get(f"/instructor/quizzes/{quiz['id']}/statistics/").content.decode()
    assert "no responses" in html and "4 results not recorded" in html
    assert "Not on the chart: 1 (no responses)" in html


def test_a_wrong_number_of_a_template_is_named_in_words_not_by_a_tilde(
    world, quiz_course
):
    quiz = create(world, shuffle=False)

    def head_counted_twice(attempt_id):
        answers = right_answers(attempt_id)
        drawn = keys(attempt_id)[template_number(attempt_id)]
        answers[str(template_number(attempt_id))] = str(drawn.wrong[0].number)
        return answers

    sit(world.lea, quiz["id"], head_counted_twice)
    sit(world.leo, quiz["id"], head_counted_twice)
    (wrong,) = by_item(stats_of(world, quiz))[1]["wrong_answers"]
    assert wrong["answer"] == "the answer of: counted the tied head twice"
    assert wrong["count"] == 2


def test_the_page_names_items_explains_its_marks_and_shows_no_variant(
    world, quiz_course
):
    quiz = create(world, shuffle=False)
    lea = sit(world.lea, quiz["id"], right_answers)
    sit(world.leo, quiz["id"], right_answers)
    page = Client()
    page.force_login(world.owner)
    html = page.get(f"/instructor/quizzes/{quiz['id']}/statistics/").content.decode()
    # mean 4 of 4 points (100%), as the results' score 1.0 is.
    assert "mean 4 of 4 points (100%)" in html
    # The minimum for flags, and each row's note below it.
    assert "at least 5 responses" in html
    assert html.count("too few responses (n &lt; 5) to flag") == 1 + 3
    # The template: its title and that numbers differ, not lea's numbers.
    variant = keys(lea.pk)[1].prompt
    assert "Parameters of a model" in html and "numbers differ per learner" in html
    assert variant.split(",")[0] not in html
    assert "~" not in html
    # The chart labels its points by item number, the key names them.
    assert '<ol class="chart-key"' in html
    assert 'href="#item-2"' in html and 'id="item-2"' in html


class BankWithQuizQuestions(Bank):
    """Bank, plus a quiz-only question "b:..." (fixed prompt) as in the plan."""

    def has(self, ref):
        return ref.startswith("b:") or super().has(ref)

    def draw(self, ref, seed):
        if ref.startswith("b:"):
            return Drawn(
                ref=ref,
                kind="choice",
                title="Quiz questions",
                prompt="Which matrix does GPT-2 reuse as its output head, "
                "and why does that save `50257 * 768` parameters?",
                options=["wte", "wpe"],
                correct=0,
                wrong=[WrongAnswer("wpe", "", "took the position table")],
            )
        return super().draw(ref, seed)


def test_a_fixed_prompt_of_any_kind_of_ref_is_treated_like_a_self_check(
    world, quiz_course, monkeypatch
):
    monkeypatch.setattr(item_report, "Bank", BankWithQuizQuestions)
    quiz = create(world, shuffle=False)
    for user, chose in ((world.lea, 0), (world.leo, 1)):  # wte (right), wpe
        attempt = sit(user, quiz["id"], right_answers)
        items = attempt.items
        items[1] = {**items[1], "ref": "b:output-head", "order": [0, 1]}
        answers = {**attempt.answers, "2": {"value": chose}}
        QuizAttempt.objects.filter(pk=attempt.pk).update(items=items, answers=answers)
    question = by_item(stats_of(world, quiz))[2]
    assert question["question"] == "b:output-head"
    # Named by its first words, its prompt shown, its options by their text.
    assert question["title"] == (
        "Which matrix does GPT-2 reuse as its output head, and why does that…"
    )
    assert question["prompt"].startswith("Which matrix") and not question["varies"]
    assert [(o["option"], o["count"]) for o in question["options"]] == [
        ("wte", 1),
        ("wpe", 1),
    ]
    # The wrong option its misconception names is read as that misconception.
    (seen,) = question["misconceptions"]
    assert seen["text"] == "50% chose the answer of: took the position table"


def test_short_prompt_cuts_at_a_word_and_closes_nothing_open():
    assert item_report.short_prompt("How many rows?\n\nMore text.") == "How many rows?"
    cut = item_report.short_prompt("Count the rows of `wte`, then of `wpe`. " * 4, 40)
    assert cut == "Count the rows of `wte`, then of `wpe`…"
    assert item_report.short_prompt("Why does `a very long code span here`", 20) == (
        "Why does…"
    )
