"""A quiz through LTI, against the simulated platform over HTTP: deep-linked
with its line item, opened by a learner, and its score (the quiz's own rule
over submitted attempts) sent back as an assignment's is, once per change.
Attempts go through the real services (teaching.quizzes.services)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from lms.models import LineItem, LinkScore, LmsAccount, LmsCourse, ScoreSync
from quiz.content.loader import content_load
from teaching.models import Quiz
from teaching.quizzes.services import (
    SlotSpec,
    attempt_save,
    attempt_start,
    attempt_submit,
    quiz_create,
    scores_release,
)
from tests.lms.platform import INSTRUCTOR, LEARNER, auto_post_form
from tests.quiz.quiz_fixtures import right_answers, scored_questions

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"


def make_quiz(cohort, feedback="immediate"):
    """Two questions of a point each, not shuffled; the best attempt counts.
    Immediate feedback: each attempt's score shows (and goes) at its submit."""
    questions = scored_questions()
    return quiz_create(
        cohort=cohort,
        actor=cohort.owner,
        slots=[
            SlotSpec(pool={"questions": [questions["choice"].pk]}),
            SlotSpec(pool={"questions": [questions["numeric"].pk]}),
        ],
        title="Quiz 1",
        opens_at=timezone.now() - timedelta(hours=1),
        closes_at=timezone.now() + timedelta(days=1),
        time_limit=None,
        attempts_allowed=3,
        combine="best",
        feedback=feedback,
        shuffle=False,
    )


def take(quiz, learner, right: set[str]) -> None:
    attempt, _ = attempt_start(quiz=quiz, learner=learner)
    answers = {n: a for n, a in right_answers(attempt.pk).items() if n in right}
    attempt_save(attempt=attempt, answers=answers)
    attempt_submit(attempt=attempt)


def test_a_deep_linked_quiz_gets_its_column_and_each_new_score(
    platform, tool, content_tree
):
    content_load(root=content_tree.root)
    with requests.Session() as teacher:  # the course's cohort exists
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR])
    quiz = make_quiz(LmsCourse.objects.get().cohort)

    with requests.Session() as teacher:
        response, _ = platform.launch(
            teacher, tool, sub="t-1", roles=[INSTRUCTOR], message="deep-link"
        )
        picker = teacher.get(tool + response.headers["Location"])
        assert "Quizzes" in picker.text and "Quiz 1" in picker.text
        launch_id = picker.url.split("launch=")[1]
        back = teacher.post(
            tool + "/lti/deep-link/",
            data={"launch": launch_id, "resource": [f"quiz:{quiz.pk}"]},
        )
        assert back.status_code == 200
        action, fields = auto_post_form(back.text)
        assert teacher.post(action, data=fields).status_code == 200
    ((item,),) = [r[ITEMS] for r in platform.deep_link_returns]
    assert item["custom"] == {"resource": f"quiz:{quiz.pk}"}
    line_item = item["lineItem"]
    assert (line_item["resourceId"], line_item["label"]) == (
        f"quiz-{quiz.pk}",
        "Quiz 1",
    )
    assert line_item["scoreMaximum"] == 100
    # The LMS makes the column with the link, as Canvas does.
    url = f"{platform.lineitems_url}/quizcolumn"
    platform.line_items["quizcolumn"] = {**line_item, "id": url}

    with requests.Session() as teacher:  # an instructor lands on its page
        opened, _ = platform.launch(
            teacher, tool, sub="t-1", roles=[INSTRUCTOR], custom=item["custom"],
            link_id="link-q", lineitem=url,
        )  # fmt: skip
    assert opened.headers["Location"] == f"/instructor/quizzes/{quiz.pk}/"
    with requests.Session() as browser:  # a learner lands on the quiz
        opened, _ = platform.launch(
            browser, tool, sub="s-1", roles=[LEARNER], custom=item["custom"],
            link_id="link-q", lineitem=url,
        )  # fmt: skip
    assert opened.headers["Location"] == f"/quizzes/{quiz.pk}/"
    learner = LmsAccount.objects.get(sub="s-1").user
    assert not LinkScore.objects.exists()  # the quiz's own path, one score
    assert platform.scores == []  # nothing submitted: no score, not a 0

    platform.fail_scores = 1  # the LMS is down for the first try
    take(quiz, learner, {"1"})  # half right
    (score,) = platform.scores_at(url)  # the retry got through, once
    assert score["userId"] == "s-1"
    assert (score["scoreGiven"], score["scoreMaximum"]) == (50.0, 100.0)
    assert score["gradingProgress"] == "FullyGraded"
    assert list(platform.line_items) == ["quizcolumn"]  # found, not made again
    row = ScoreSync.objects.get()
    assert (row.quiz, row.assignment, row.sent_version) == (quiz, None, 1)
    assert (LineItem.objects.get().quiz, LineItem.objects.get().url) == (quiz, url)

    take(quiz, learner, {"1", "2"})  # better: the best attempt counts
    take(quiz, learner, set())  # worse: the best stays, nothing is sent
    assert [s["scoreGiven"] for s in platform.scores_at(url)] == [50.0, 100.0]

    # A quiz whose feedback waits for its close: the LMS hears of its score
    # only when the close opens it (the periodic release), once.
    held = make_quiz(LmsCourse.objects.get().cohort, feedback="after_close")
    take(held, learner, {"1", "2"})
    assert not ScoreSync.objects.filter(quiz=held).exclude(score=0).exists()
    before = len(platform.scores)
    past = timezone.now() - timedelta(seconds=1)
    Quiz.objects.filter(pk=held.pk).update(
        opens_at=past - timedelta(hours=2), closes_at=past
    )
    assert scores_release() == 1 and scores_release() == 0
    sent = platform.scores[before:]
    assert [(s["userId"], s["scoreGiven"]) for s in sent] == [("s-1", 100.0)]
