"""Scores to the line item an LMS made itself (an LMS assignment whose
submission type is this tool), against the simulated platform over HTTP.

The launch's AGS claim names the line item; the learner's work on the linked
exercise or lesson goes there, once per change, with the assignment path's
retries. Grades come from real grading (the cold sandbox)."""

from __future__ import annotations

import pytest
import requests

from lms.models import LinkScore, LmsAccount
from lms.tasks import refresh_learner
from quiz.content.loader import content_load
from quiz.content.models import Lesson
from quiz.learning import progress
from tests.lms.platform import INSTRUCTOR, LEARNER
from tests.lms.test_grades_and_links import RIGHT, WRONG, grade, make_assignment

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
EXERCISE = {"resource": "exercise:block-param-count"}


def learner_launch(platform, tool, *, sub="s-1", **claims):
    with requests.Session() as learner:
        response, _ = platform.launch(learner, tool, sub=sub, roles=[LEARNER], **claims)
        assert response.status_code == 302, response.text[:300]
    return LmsAccount.objects.get(sub=sub).user


def test_an_lms_assignment_on_an_exercise_gets_its_score_once(
    platform, tool, block_exercise
):
    url = platform.lineitem_make("Count one block", resource_link_id="link-7")
    with requests.Session() as teacher:  # previewing it scores nobody
        platform.launch(
            teacher, tool, sub="t-1", roles=[INSTRUCTOR], custom=EXERCISE,
            link_id="link-7", lineitem=url,
        )  # fmt: skip
    assert not LinkScore.objects.exists()
    learner = learner_launch(
        platform, tool, custom=EXERCISE, link_id="link-7", lineitem=url
    )
    link = LinkScore.objects.get()
    assert (link.resource_link_id, link.lineitem_url) == ("link-7", url)
    assert (link.target, link.learner) == ("exercise:block-param-count", learner)
    assert platform.scores == []  # nothing done yet: no score, not a 0
    assert grade(learner, block_exercise, WRONG).status == "failed"
    assert platform.scores == []  # still nothing earned
    platform.fail_scores = 1  # the LMS is down for the first try
    assert grade(learner, block_exercise, RIGHT).status == "passed"
    (score,) = platform.scores_at(url)  # the retry got through, once
    assert score["userId"] == "s-1"
    assert (score["scoreGiven"], score["scoreMaximum"]) == (100.0, 100.0)
    assert score["gradingProgress"] == "FullyGraded"
    link.refresh_from_db()
    # Version 1 was the 0 of "nothing done yet", never sent.
    assert (link.version, link.sent_version, link.attempts) == (2, 2, 2)
    # The same event again, and work that changes nothing: nothing new.
    refresh_learner.apply(args=[learner.pk])
    assert grade(learner, block_exercise, WRONG).status == "failed"
    assert grade(learner, block_exercise, RIGHT).status == "passed"
    assert len(platform.scores) == 1
    # Another launch of the same link is the same row, not a second column.
    learner_launch(platform, tool, custom=EXERCISE, link_id="link-7", lineitem=url)
    assert LinkScore.objects.count() == 1 and len(platform.scores) == 1
    # The LMS moved the link to a new column: the score goes there, once.
    moved = platform.lineitem_make("Count one block (new)", resource_link_id="link-7")
    learner_launch(platform, tool, custom=EXERCISE, link_id="link-7", lineitem=moved)
    (again,) = platform.scores_at(moved)
    assert again["scoreGiven"] == 100.0 and len(platform.scores) == 2


def test_an_lms_assignment_on_a_lesson_gets_each_change_of_its_self_checks(
    platform, tool, content_tree
):
    content_load(root=content_tree.root)
    lesson = Lesson.objects.get(slug="first-lesson")
    questions = list(lesson.questions.order_by("order"))
    assert len(questions) == 3
    page = tool + f"/lessons/{lesson.slug}/"
    # Opened first from a course menu link (no line item), work done there.
    learner = learner_launch(platform, tool, target_link_uri=page)
    progress.question_attempt_create(
        user=learner, question=questions[0], data={"answer": "1"}
    )
    assert not LinkScore.objects.exists() and platform.scores == []
    # The LMS assignment's launch brings the work done before it.
    url = platform.lineitem_make("Lesson one", resource_link_id="link-9")
    learner_launch(platform, tool, target_link_uri=page, link_id="link-9", lineitem=url)
    assert [s["scoreGiven"] for s in platform.scores_at(url)] == [33.3]
    # A retry of a first answer and a wrong first answer change nothing...
    progress.question_attempt_create(
        user=learner, question=questions[0], data={"answer": "1"}
    )
    progress.question_attempt_create(
        user=learner, question=questions[1], data={"answer": "12"}
    )
    assert len(platform.scores) == 1
    # ...a right first answer sends the new score, once.
    progress.question_attempt_create(
        user=learner, question=questions[2],
        data={"answer": "One matrix.", "self_rating": "right"},
    )  # fmt: skip
    assert [s["scoreGiven"] for s in platform.scores_at(url)] == [33.3, 66.7]
    assert platform.scores[-1]["userId"] == "s-1"


def test_a_deep_linked_assignment_keeps_its_own_score_path(
    platform, tool, block_exercise
):
    with requests.Session() as teacher:
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR])
    assignment = make_assignment(block_exercise)
    url = platform.lineitem_make("Week 1", resource_link_id="link-3")
    learner = learner_launch(
        platform, tool, custom={"resource": f"assignment:{assignment.pk}"},
        link_id="link-3", lineitem=url,
    )  # fmt: skip
    assert not LinkScore.objects.exists()  # scored as the assignment, once
    grade(learner, block_exercise, RIGHT)
    (score,) = platform.scores
    assert score["scoreGiven"] == 100.0


def test_a_launch_whose_line_item_is_not_a_url_is_ignored(
    platform, tool, block_exercise
):
    learner_launch(platform, tool, custom=EXERCISE, lineitem="javascript:alert(1)")
    assert not LinkScore.objects.exists()
