"""Deep linking, grades to the LMS (AGS) and rosters (NRPS), against the
simulated platform over HTTP. Grades come from real grading (the cold
sandbox) through the same path a worker takes."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests
from django.utils import timezone

from grader import submission_grading
from grader.models import Submission
from lms import grades
from lms.models import LineItem, LmsAccount, LmsCourse, ScoreSync
from teaching.assignments.services import (
    ItemSpec,
    assignment_create,
    override_set,
)
from tests.lms.platform import INSTRUCTOR, LEARNER, auto_post_form

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
WRONG = "def block_param_count(n_embd):\n    return 12 * n_embd**2\n"


def make_assignment(exercise):
    """ "Week 1", open, due in a week, for the LMS course's cohort."""
    lms_course = LmsCourse.objects.get()
    return assignment_create(
        cohort=lms_course.cohort,
        actor=lms_course.cohort.owner,
        title="Week 1",
        opens_at=timezone.now() - timedelta(days=1),
        due_at=timezone.now() + timedelta(days=7),
        items=[ItemSpec("exercise", exercise.slug)],
    )


@pytest.fixture
def course(platform, tool, block_exercise):
    """An instructor launched (the cohort exists) and made an assignment."""
    with requests.Session() as teacher:
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR])
    return LmsCourse.objects.get(), make_assignment(block_exercise)


def learner_launch(platform, tool, sub="s-1"):
    with requests.Session() as learner:
        response, _ = platform.launch(learner, tool, sub=sub, roles=[LEARNER])
        assert response.status_code == 302
    return LmsAccount.objects.get(sub=sub).user


def grade(user, exercise, code) -> Submission:
    submission = Submission.objects.create(
        user=user, exercise=exercise, code=code, seed=3, status="queued"
    )
    submission_grading.submission_grade(submission_id=str(submission.pk))
    submission.refresh_from_db()
    return submission


def test_deep_linking_turns_picked_items_into_signed_links(
    platform, tool, course, block_exercise
):
    _, assignment = course
    with requests.Session() as teacher:
        response, _ = platform.launch(
            teacher, tool, sub="t-1", roles=[INSTRUCTOR], message="deep-link"
        )
        assert response.status_code == 302
        picker = teacher.get(tool + response.headers["Location"])
        assert picker.status_code == 200
        assert "Count one block" in picker.text and "Week 1" in picker.text
        assert (
            "frame-ancestors 'self' " + platform.url
            in (picker.headers["Content-Security-Policy"])
        )
        launch_id = picker.url.split("launch=")[1]
        chosen = ["exercise:block-param-count", f"assignment:{assignment.pk}"]
        back = teacher.post(
            tool + "/lti/deep-link/", data={"launch": launch_id, "resource": chosen}
        )
        assert back.status_code == 200
        action, fields = auto_post_form(back.text)
        assert action == platform.url + "/deep-link-return"
        assert teacher.post(action, data=fields).status_code == 200
        again = teacher.post(
            tool + "/lti/deep-link/", data={"launch": launch_id, "resource": chosen}
        )
        assert again.status_code == 400 and "already sent" in again.text
    (returned,) = platform.deep_link_returns  # verified against the tool's JWKS
    claim = "https://purl.imsglobal.org/spec/lti/claim/"
    assert returned[claim + "message_type"] == "LtiDeepLinkingResponse"
    assert returned[claim + "deployment_id"] == platform.deployment_id
    assert returned["https://purl.imsglobal.org/spec/lti-dl/claim/data"] == (
        "opaque-platform-data"
    )
    items = returned["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert [i["custom"]["resource"] for i in items] == chosen
    assert all(i["url"] == tool + "/lti/launch/" for i in items)
    assert "lineItem" not in items[0]
    assert items[1]["lineItem"]["resourceId"] == f"assignment-{assignment.pk}"
    # The link opens what was picked.
    with requests.Session() as learner:
        opened, _ = platform.launch(
            learner, tool, sub="s-1", roles=[LEARNER], custom=items[1]["custom"]
        )
    assert opened.headers["Location"] == f"/#assignment-{assignment.pk}"


def test_deep_linking_is_for_instructors_only(platform, tool):
    with requests.Session() as learner:
        response, _ = platform.launch(
            learner, tool, sub="s-1", roles=[LEARNER], message="deep-link"
        )
    assert response.status_code == 403
    assert "Only instructors" in response.text


def test_the_picker_refuses_a_made_up_launch(tool, db):
    response = requests.get(tool + "/lti/deep-link/?launch=lti1p3-launch-nope")
    assert response.status_code == 404


def test_a_grade_sends_the_score_once_and_a_503_is_retried(
    platform, tool, course, block_exercise
):
    _, assignment = course
    learner = learner_launch(platform, tool)
    platform.fail_scores = 1  # the LMS is down for the first try
    assert grade(learner, block_exercise, RIGHT).status == "passed"
    (score,) = platform.scores  # the retry got through, once
    assert score["userId"] == "s-1"
    assert (score["scoreGiven"], score["scoreMaximum"]) == (100.0, 100.0)
    assert score["gradingProgress"] == "FullyGraded"
    (line_item,) = platform.line_items.values()
    assert line_item["resourceId"] == f"assignment-{assignment.pk}"
    assert line_item["label"] == "Week 1"
    row = ScoreSync.objects.get()
    assert (row.version, row.sent_version, row.attempts) == (1, 1, 2)
    assert LineItem.objects.get().url == line_item["id"]
    # A later, worse attempt does not change the best score: nothing is sent.
    assert grade(learner, block_exercise, WRONG).status == "failed"
    assert len(platform.scores) == 1


def test_scores_go_in_order_with_their_own_timestamps(
    platform, tool, course, block_exercise
):
    lms_course, assignment = course
    learner = learner_launch(platform, tool)
    platform.fail_scores = 100  # down for longer than the in-process tries
    assert grade(learner, block_exercise, RIGHT).status == "passed"
    first = ScoreSync.objects.get()
    assert (first.score, first.version, first.sent_version) == (100.0, 1, 0)
    override_set(
        assignment=assignment, actor=lms_course.cohort.owner, learner=learner,
        item_id=assignment.items.get().pk, score=0.5, reason="copied part of it",
    )  # fmt: skip
    row = ScoreSync.objects.get()
    assert (row.score, row.version, row.sent_version) == (50.0, 2, 0)
    assert row.pending and "503" in row.last_error and platform.scores == []
    platform.fail_scores = 0
    assert grades.scores_waiting() == [row.pk]
    from lms.tasks import sweep

    sweep.apply()
    (score,) = platform.scores  # only the newest score, never the 100 after it
    assert score["scoreGiven"] == 50.0
    row.refresh_from_db()
    assert score["timestamp"].startswith(row.computed_at.strftime("%Y-%m-%dT%H:%M:%S"))
    assert row.computed_at > first.computed_at
    assert not row.pending
    assert grades.score_send(row.pk) is False  # sending again sends nothing
    assert len(platform.scores) == 1


def test_work_outside_the_assignment_sends_no_zero(platform, tool, course):
    learner = learner_launch(platform, tool)
    from lms.tasks import refresh_learner

    refresh_learner.apply(args=[learner.pk])  # e.g. after a lesson's self-check
    row = ScoreSync.objects.get()
    assert (row.score, row.pending) == (0.0, False)
    assert platform.scores == [] and platform.line_items == {}


def test_a_score_the_lms_refuses_is_marked_and_shown(
    platform, tool, course, block_exercise
):
    learner = learner_launch(platform, tool)
    grade(learner, block_exercise, RIGHT)
    row = ScoreSync.objects.get()
    platform.refuse_scores = True
    ScoreSync.objects.filter(pk=row.pk).update(version=2)
    assert grades.score_send(row.pk) is False  # a 400: refused, not retried
    row.refresh_from_db()
    assert row.failed and not row.pending and "400" in row.last_error
    assert grades.scores_waiting() == []
    with requests.Session() as teacher:
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR])
        page = teacher.get(tool + "/lti/courses/")
    assert "1 refused" in page.text and "no such user in this course" in page.text


def test_instructors_sync_the_roster_on_demand(platform, tool, course):
    platform.members = [
        {"user_id": "s-7", "name": "New Learner", "roles": [LEARNER], "status": "Active"},  # noqa: E501
    ]  # fmt: skip
    lms_course, _ = course
    with requests.Session() as teacher:
        platform.launch(teacher, tool, sub="t-1", roles=[INSTRUCTOR])
        page = teacher.get(tool + "/lti/courses/")
        assert "Transformers 101" in page.text
        token = teacher.cookies["csrftoken"]
        platform.members.append(
            {"user_id": "s-8", "name": "Later Learner", "roles": [LEARNER]}
        )
        done = teacher.post(
            tool + f"/lti/courses/{lms_course.pk}/roster/",
            data={"csrfmiddlewaretoken": token},
            headers={"Referer": tool + "/lti/courses/"},
        )
        assert done.status_code == 200
        assert "the LMS lists 2 people" in done.text
    subs = set(
        lms_course.cohort.memberships.values_list("user__lms_accounts__sub", flat=True)
    )
    assert subs == {"s-7", "s-8"}
