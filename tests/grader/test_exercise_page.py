"""The exercise and submission pages: editor markup, results, history, solution."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from grader.models import Submission
from quiz.models import Diagnosis, Lesson, Section

pytestmark = pytest.mark.django_db

SOLUTION_LINE = "return 12 * n_embd**2 + 13 * n_embd"


@pytest.fixture
def lesson(db):
    section = Section.objects.create(slug="block", order=1, title="The block")
    return Lesson.objects.create(
        section=section,
        slug="block-parameters",
        order=1,
        title="One block, counted exactly",
        question="?",
        body="b",
    )


@pytest.fixture
def exercise(block_exercise, lesson):
    block_exercise.lesson = lesson
    block_exercise.save()
    return block_exercise


def attempt(user, exercise, status="failed", score=0.0, checks=None) -> Submission:
    return Submission.objects.create(
        user=user,
        exercise=exercise,
        code="def block_param_count(n_embd):\n    return 1\n",
        seed=1,
        status=status,
        score=None if status in ("queued", "running") else score,
        checks=checks or [],
    )


def page(client, exercise) -> str:
    response = client.get(reverse("exercise", args=[exercise.slug]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_learner_gets_an_editor_form_with_starter_reset_and_help(
    client, learner, exercise
):
    client.force_login(learner)
    html = page(client, exercise)
    assert re.search(r'<label for="code"[^>]*>Your code</label>', html)
    assert '<textarea id="code" name="code"' in html
    assert 'aria-describedby="editor-help"' in html
    assert "Escape, then Tab" in html and "Ctrl+Enter" in html
    assert 'id="reset-code"' in html and "hidden>Reset to starter code" in html
    assert (
        '<script id="starter-code" type="application/json">'
        '"def block_param_count(n_embd):\\n    ...\\n"</script>'
    ) in html
    assert f'href="{reverse("lesson", args=["block-parameters"])}"' in html
    assert "block_param_count(n_embd) -&gt; int" in html


def test_the_editor_bundle_is_loaded_only_when_it_was_built(
    client, learner, exercise, monkeypatch
):
    client.force_login(learner)
    monkeypatch.setattr("grader.views.finders.find", lambda path: "/x/" + path)
    assert 'src="/static/vendor/editor.js"' in page(client, exercise)
    monkeypatch.setattr("grader.views.finders.find", lambda path: None)
    html = page(client, exercise)
    assert "vendor/editor.js" not in html
    assert '<textarea id="code" name="code"' in html  # still a working form


def test_the_solution_is_not_in_the_html_before_a_pass_or_enough_attempts(
    client, learner, exercise, settings
):
    settings.SOLUTION_AFTER_ATTEMPTS = 3
    assert SOLUTION_LINE not in page(client, exercise)  # anonymous
    client.force_login(learner)
    attempt(learner, exercise, "failed")
    attempt(learner, exercise, "failed")
    # Neither a grader error nor an ungraded attempt counts.
    attempt(learner, exercise, "error")
    attempt(learner, exercise, "queued")
    html = page(client, exercise)
    assert SOLUTION_LINE not in html
    assert "after 3 graded attempts (1 to go)" in html
    latest = Submission.objects.filter(status="failed").first()
    submission_html = client.get(reverse("submission", args=[latest.pk])).content
    assert SOLUTION_LINE not in submission_html.decode()


def test_the_solution_appears_after_n_graded_attempts_with_the_reason(
    client, learner, exercise, settings
):
    settings.SOLUTION_AFTER_ATTEMPTS = 3
    for _ in range(3):
        attempt(learner, exercise, "failed")
    client.force_login(learner)
    html = page(client, exercise)
    assert SOLUTION_LINE in html
    assert "Shown because you have made 3 graded attempts" in html


def test_the_solution_appears_after_a_pass_with_the_reason(
    client, learner, make_user, exercise
):
    other = make_user("otto")
    attempt(other, exercise, "passed", 1.0)  # someone else's pass unlocks nothing
    client.force_login(learner)
    assert SOLUTION_LINE not in page(client, exercise)
    attempt(learner, exercise, "passed", 1.0)
    html = page(client, exercise)
    assert SOLUTION_LINE in html
    assert "Shown because you passed this exercise" in html
    assert 'id="passed-badge"' in html


def test_the_history_lists_only_the_learners_own_attempts(
    client, learner, make_user, admin_user, exercise
):
    mine = [attempt(learner, exercise, "failed", 0.25), attempt(learner, exercise)]
    theirs = attempt(make_user("otto"), exercise, "passed", 1.0)
    client.force_login(learner)
    html = page(client, exercise)
    table = html[html.index('id="attempts"') :]
    assert table.count("<tr><td>") == 2
    for row in mine:
        assert reverse("submission", args=[row.pk]) in table
    assert reverse("submission", args=[theirs.pk]) not in html
    assert "0.25" in table and "failed" in table
    client.force_login(admin_user)  # an admin's own page is theirs alone too
    assert 'id="attempts"' not in page(client, exercise)


CHECKS = [
    {"name": "d=768", "passed": True, "message": "ok"},
    {
        "name": "d=64",
        "passed": False,
        "message": "got 49152, expected 50048",
        "expected": "50048",
        "got": "49152",
        "diagnosis": "forgot-biases-and-layernorms",
    },
    {
        "name": "d=32",
        "passed": False,
        "message": "off",
        "diagnosis": "no-row-for-this-one",
    },
]


def test_results_show_expected_got_and_the_diagnosis_with_its_lessons(
    client, learner, exercise, lesson
):
    other = Lesson.objects.create(
        section=lesson.section,
        slug="formula",
        order=2,
        title="The formula",
        question="?",
        body="b",
    )
    row = Diagnosis.objects.create(
        slug="forgot-biases-and-layernorms", summary="Counted only the matrices."
    )
    row.lessons.set([other])
    submission = attempt(learner, exercise, "failed", 0.33, CHECKS)
    client.force_login(learner)
    for html in (
        client.get(reverse("submission", args=[submission.pk])).content.decode(),
        page(client, exercise),  # the latest result, inline
    ):
        assert "<dt>Expected</dt><dd><code>50,048</code>" in html
        assert "<dt>Got</dt><dd><code>49,152</code>" in html
        assert '<span class="diagnosis-hint">Counted only the matrices.</span>' in html
        assert (
            f'<a href="{reverse("lesson", args=["formula"])}">The formula</a>' in html
        )
        # No Diagnosis row: the slug itself, and the exercise's own lesson.
        assert '<span class="diagnosis-hint">no-row-for-this-one</span>' in html
        assert html.count(">One block, counted exactly</a>") >= 1


def test_a_diagnosis_shared_by_several_checks_is_explained_once(
    client, learner, exercise
):
    Diagnosis.objects.create(slug="copied-not-shared", summary="Copied, not shared.")
    checks = [
        {
            "name": f"case {n}",
            "passed": False,
            "message": "m",
            "diagnosis": "copied-not-shared",
        }
        for n in range(3)
    ]
    submission = attempt(learner, exercise, "failed", 0.0, checks)
    client.force_login(learner)
    html = client.get(reverse("submission", args=[submission.pk])).content.decode()
    assert html.count("Copied, not shared.") == 1
    assert "(3 checks)" in html
    assert html.count('<span class="diagnosis-tag"') == 3


def test_a_nul_character_is_refused_with_a_message_and_nothing_saved(
    client, learner, exercise
):
    client.force_login(learner)
    response = client.post(
        reverse("exercise", args=[exercise.slug]), {"code": "x = 1\x00"}
    )
    assert response.status_code == 200
    assert "the code contains a NUL character" in response.content.decode()
    assert not Submission.objects.exists()


def count_queries(client, url) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def test_the_exercise_page_does_not_query_per_attempt(client, learner, exercise):
    Diagnosis.objects.create(slug="forgot-biases-and-layernorms", summary="s")
    client.force_login(learner)
    url = reverse("exercise", args=[exercise.slug])
    attempt(learner, exercise, "failed", 0.3, CHECKS)
    one = count_queries(client, url)
    for _ in range(12):
        attempt(learner, exercise, "failed", 0.3, CHECKS)
    assert count_queries(client, url) == one
    assert one <= 13, one  # 12, and exam mode's one (is the learner sitting a quiz?)


def test_the_submission_page_does_not_query_per_check(client, learner, exercise):
    client.force_login(learner)
    Diagnosis.objects.create(slug="forgot-biases-and-layernorms").lessons.set(
        [exercise.lesson]
    )
    few = attempt(learner, exercise, "failed", 0.3, CHECKS[:2])
    many_checks = CHECKS + [
        {**CHECKS[1], "name": f"d={n}", "diagnosis": f"mistake-{n}"} for n in range(10)
    ]
    for n in range(10):
        Diagnosis.objects.create(slug=f"mistake-{n}").lessons.set([exercise.lesson])
    many = attempt(learner, exercise, "failed", 0.3, many_checks)
    assert count_queries(client, reverse("submission", args=[few.pk])) == count_queries(
        client, reverse("submission", args=[many.pk])
    )


def test_the_editor_opens_with_the_learners_last_attempt_not_the_starter(
    client, learner, exercise, make_user
):
    other = make_user("someone-else")
    Submission.objects.create(
        user=other, exercise=exercise, code="OTHER LEARNER'S CODE", seed=1
    )
    client.force_login(learner)
    assert ">def block_param_count(n_embd):\n    ...\n</textarea>" in page(
        client, exercise
    )
    first = attempt(learner, exercise)
    first.code = "def block_param_count(n_embd):\n    return 'first'\n"
    first.save()
    latest = attempt(learner, exercise, status="cancelled")
    latest.code = "def block_param_count(n_embd):\n    return 'latest'\n"
    latest.save()
    html = page(client, exercise)
    textarea = re.search(r'<textarea id="code"[^>]*>(.*?)</textarea>', html, re.S)
    assert "return &#x27;latest&#x27;" in textarea.group(1)
    assert "OTHER LEARNER" not in html
    assert 'id="code-source"' in html and "your last attempt" in html
    # The draft is keyed by user and exercise and tied to that attempt.
    assert f'data-draft-key="course-draft:{learner.pk}:{exercise.slug}"' in html
    assert f'data-draft-base="{latest.pk}"' in html
    # The starter stays in the page for "Reset to starter code".
    assert '"def block_param_count(n_embd):\\n    ...\\n"</script>' in html
