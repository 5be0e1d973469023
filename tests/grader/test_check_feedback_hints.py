"""Progressive hints: the concept and failing fact first, where to look
after 2 failed attempts (or on request), the fix after 4 or a pass; a
message several cases share is shown once with its cases."""

from __future__ import annotations

import pytest
from django.urls import reverse

from grader import check_feedback
from grader.check_feedback import hint_level, split_fix
from grader.models import Submission
from quiz.models import Diagnosis, Lesson, Section

FIX = "model.lm_head.weight = model.transformer.wte.weight"
COPIED = (
    "you copied wte instead of sharing it: the head has its own "
    f"38,597,376-element tensor. Assign the Parameter itself: {FIX}"
)


def test_split_fix_separates_the_closing_code_from_the_failing_fact():
    fact, fix = split_fix(COPIED)
    assert fact.startswith("you copied wte instead of sharing it")
    assert fact.endswith("tensor.") and FIX not in fact
    assert fix == f"Assign the Parameter itself: {FIX}"
    fact, fix = split_fix(
        "the head holds a COPY of the new table: equal now, but they drift "
        f"apart after the first optimizer step. Share it: {FIX}"
    )
    assert fix == f"Share it: {FIX}" and "drift apart" in fact


@pytest.mark.parametrize(
    "message",
    [
        "off by 896: expected 5 = 2 + 3",  # an equation, not a fix
        "lm_head.weight (50257, 768) is not the embedding's Parameter",
        "",
    ],
)
def test_split_fix_leaves_messages_without_a_fix_whole(message):
    assert split_fix(message) == (message, "")


@pytest.mark.parametrize(
    ("failures", "passed", "where", "fix", "remaining"),
    [
        (0, False, False, False, 4),
        (1, False, False, False, 3),
        (2, False, True, False, 2),
        (3, False, True, False, 1),
        (4, False, True, True, 0),
        (9, False, True, True, 0),
        (0, True, True, True, 4),
    ],
)
def test_hint_level_opens_where_to_look_after_2_and_the_fix_after_4(
    failures, passed, where, fix, remaining
):
    level = hint_level(failures=failures, passed=passed)
    assert (level.where_open, level.fix_shown) == (where, fix)
    assert level.fix_remaining == remaining
    assert hint_level(failures=0, passed=False, full=True).fix_shown


@pytest.mark.django_db
def test_a_message_several_cases_share_is_shown_once_with_its_cases():
    checks = [
        {"name": "n=1", "passed": False, "message": COPIED},
        {"name": "n=2", "passed": True, "message": "ok"},
        {"name": "n=3", "passed": False, "message": COPIED},
        {"name": "n=4", "passed": False, "message": "something else"},
        {"name": "n=5", "passed": False, "message": COPIED},
    ]
    shown = check_feedback.checks_for_display(checks=checks)
    assert shown[0]["also"] == ["n=3", "n=5"] and shown[0]["repeat_of"] == ""
    assert [shown[i]["repeat_of"] for i in (2, 4)] == ["n=1", "n=1"]
    assert shown[3]["repeat_of"] == "" and shown[3]["also"] == []
    assert shown[0]["fix"].endswith(FIX)


def failed(user, exercise, n: int):
    for _ in range(n):
        Submission.objects.create(
            user=user,
            exercise=exercise,
            code="x",
            seed=1,
            status="failed",
            score=0.0,
            checks=[
                {
                    "name": f"case {k}",
                    "passed": False,
                    "message": COPIED,
                    "diagnosis": "copied-not-shared",
                }
                for k in range(3)
            ],
        )


@pytest.mark.django_db
def test_the_pages_give_the_fix_away_only_after_4_failures_or_a_pass(
    client, learner, block_exercise, make_user
):
    client.force_login(learner)
    section = Section.objects.create(slug="head", order=1, title="The head")
    block_exercise.lesson = Lesson.objects.create(
        section=section, slug="tying", order=1, title="Tying", question="?", body="b"
    )
    block_exercise.save()
    Diagnosis.objects.create(slug="copied-not-shared", summary="Copied, not shared.")
    url = reverse("exercise", args=[block_exercise.slug])
    failed(learner, block_exercise, 1)
    latest = Submission.objects.filter(user=learner).first()
    for html in (
        client.get(url).content.decode(),
        client.get(reverse("submission", args=[latest.pk])).content.decode(),
    ):
        assert FIX not in html
        assert html.count("you copied wte instead of sharing it") == 1
        assert "Same message for: case 1, case 2." in html
        assert "Copied, not shared." in html
        assert '<details class="where-to-look">' in html  # closed: on request
        assert "(3 to go)" in html
    failed(learner, block_exercise, 1)
    html = client.get(url).content.decode()
    assert '<details class="where-to-look" open>' in html and FIX not in html
    failed(learner, block_exercise, 2)
    html = client.get(url).content.decode()
    assert html.count(FIX) == 1 and "fix-locked" not in html

    # A pass shows it at once; an instructor reading a learner's work sees it.
    other = make_user("passer")
    failed(other, block_exercise, 1)
    first = Submission.objects.filter(user=other).first()
    client.force_login(other)
    assert FIX not in client.get(url).content.decode()
    Submission.objects.create(
        user=other,
        exercise=block_exercise,
        code="y",
        seed=1,
        status="passed",
        score=1.0,
    )
    page = client.get(reverse("submission", args=[first.pk])).content.decode()
    assert page.count(FIX) == 1


@pytest.mark.django_db
def test_staff_reading_a_learners_submission_see_every_hint(
    client, learner, admin_user, block_exercise
):
    failed(learner, block_exercise, 1)
    submission = Submission.objects.get(user=learner)
    url = reverse("submission", args=[submission.pk])
    client.force_login(learner)
    assert FIX not in client.get(url).content.decode()
    client.force_login(admin_user)  # sees all submissions; hints in full
    html = client.get(url).content.decode()
    assert html.count(FIX) == 1 and "fix-locked" not in html
