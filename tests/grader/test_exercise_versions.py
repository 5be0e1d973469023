"""Exercise versions: an admin save is verified before learners get it.

The grade itself is replaced by a stand-in (`fake_grade`) so these run in
milliseconds: a solution containing BAD fails its checks, everything else
passes. One slow test at the end grades a real exercise in the sandbox.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from grader import versions
from grader.models import Exercise, ExerciseVersion, Submission
from grader.selectors import exercise_list
from grader.verify import exercise_fingerprint
from quiz.content.models import Lesson, Section

pytestmark = pytest.mark.django_db

GOOD = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
BAD = "def block_param_count(n_embd):\n    return 0  # BAD\n"


def fake_grade(*, exercise, runner=None, code=None):
    code = exercise.solution if code is None else code
    if "BAD" in code or "wrong" in code:
        return {
            "status": "failed",
            "score": 0.0,
            "checks": 3,
            "failed": [{"name": "n_embd=768: count", "message": "got 0"}],
            "failed_count": 1,
            "duration_ms": 5.0,
        }
    return {
        "status": "passed",
        "score": 1.0,
        "checks": 3,
        "failed": [],
        "failed_count": 0,
        "duration_ms": 5.0,
    }


@pytest.fixture(autouse=True)
def graded(monkeypatch):
    calls = []

    def grade(**kwargs):
        calls.append(kwargs.get("code"))
        return fake_grade(**kwargs)

    monkeypatch.setattr(versions, "solution_grade", grade)
    return calls


@pytest.fixture
def lesson():
    section = Section.objects.create(slug="counting", order=5, title="Counting")
    return Lesson.objects.create(
        section=section,
        slug="count-block",
        order=1,
        title="Count a block",
        question="How many?",
        body="Body.",
    )


@pytest.fixture
def live(block_exercise, lesson):
    """A live, verified exercise at version 1, linked from `lesson`."""
    block_exercise.lesson = lesson
    block_exercise.verification = {
        "status": "passed",
        "fingerprint": exercise_fingerprint(exercise=block_exercise),
    }
    block_exercise.save()
    return block_exercise


def admin_save(django_capture_on_commit_callbacks, slug="block-param-count", **changes):
    """Save like the admin does (form values on the row's instance), then run
    the background verification it queued; returns (outcome, final status)."""
    exercise = versions.exercise_for_editing(Exercise.objects.get(slug=slug))
    for field, value in changes.items():
        setattr(exercise, field, value)
    sent = []
    with django_capture_on_commit_callbacks(execute=True):
        outcome = versions.exercise_save(
            exercise=exercise, actor=None, creating=False, send=sent.append
        )
    status = None
    for version_id in sent:
        status = versions.exercise_version_verify(version_id=version_id)
    return outcome, status


def test_a_bad_save_keeps_the_old_version_live_for_learners_and_the_api(
    live, learner, client, django_capture_on_commit_callbacks
):
    outcome, status = admin_save(django_capture_on_commit_callbacks, solution=BAD)
    assert outcome.verifying
    assert "Learners keep version 1 until it passes" in outcome.message
    assert status == ExerciseVersion.Status.FAILED

    row = Exercise.objects.get()
    assert (row.solution, row.version, row.published) == (GOOD, 1, True)
    assert list(exercise_list()) == [row]

    api = APIClient()
    api.force_authenticate(learner)
    described = api.get(reverse("api-exercise", args=["block-param-count"]))
    assert described.status_code == 200
    listed = api.get(reverse("api-exercises")).json()
    assert "block-param-count" in str(listed)

    client.force_login(learner)
    assert (
        client.get(reverse("exercise", args=["block-param-count"])).status_code == 200
    )
    page = client.get(reverse("lesson", args=["count-block"])).content.decode()
    assert reverse("exercise", args=["block-param-count"]) in page

    state = versions.exercise_version_state(exercise=row)
    assert state["live_version"] == 1
    assert state["draft"]["status"] == "failed"
    assert state["draft"]["failed"][0]["name"].startswith("reference solution:")


def test_a_fixed_save_promotes_the_new_version(
    live, django_capture_on_commit_callbacks
):
    admin_save(django_capture_on_commit_callbacks, solution=BAD)
    fixed = GOOD + "# tidied\n"
    outcome, status = admin_save(django_capture_on_commit_callbacks, solution=fixed)
    assert status == ExerciseVersion.Status.LIVE
    row = Exercise.objects.get()
    assert (row.solution, row.version, row.published) == (fixed, 3, True)
    assert row.verification["status"] == "passed"
    assert row.time_budget_seconds is not None
    assert versions.exercise_version_state(exercise=row)["draft"] is None
    assert list(row.versions.values_list("number", "status")) == [
        (3, "live"),
        (2, "failed"),
    ]


def test_a_newer_save_supersedes_a_draft_still_waiting(
    live, django_capture_on_commit_callbacks
):
    first = Exercise.objects.get()
    first.solution = GOOD + "# one\n"
    with django_capture_on_commit_callbacks(execute=False):
        waiting = versions.exercise_save(
            exercise=first, actor=None, creating=False, send=lambda pk: None
        ).version
    admin_save(django_capture_on_commit_callbacks, solution=GOOD + "# two\n")
    assert versions.exercise_version_verify(version_id=waiting.pk) is None
    assert Exercise.objects.get().solution == GOOD + "# two\n"


def test_a_wrong_solution_that_passes_keeps_the_draft_out(
    live, graded, django_capture_on_commit_callbacks
):
    wrong = [{"name": "no biases", "code": "def block_param_count(n): return 1"}]
    outcome, status = admin_save(
        django_capture_on_commit_callbacks, wrong_solutions=wrong
    )
    assert status == ExerciseVersion.Status.FAILED
    version = ExerciseVersion.objects.get()
    assert (version.done, version.total) == (2, 2)
    assert version.verification["failed"][0]["name"] == "wrong solution no biases"
    assert "cannot tell this mistake" in version.verification["failed"][0]["message"]
    assert Exercise.objects.get().wrong_solutions == live.wrong_solutions
    assert len(graded) == 2  # the reference, then the wrong solution


def test_a_right_variant_the_checks_refuse_keeps_the_draft_out(
    live, graded, django_capture_on_commit_callbacks
):
    right = [
        {
            "name": "a loop",
            "code": GOOD.replace("return", "total = 0  # BAD\n    return"),
        },
        {"name": "math", "code": GOOD},
    ]
    outcome, status = admin_save(
        django_capture_on_commit_callbacks, right_solutions=right
    )
    assert "2 right variants" in outcome.message
    assert status == ExerciseVersion.Status.FAILED
    version = ExerciseVersion.objects.get()
    assert (version.done, version.total) == (4, 4)
    (failed,) = version.verification["failed"]
    assert failed["name"] == "right variant a loop"
    assert "refuse an answer the prompt allows" in failed["message"]
    assert "got 0" in failed["message"]
    assert Exercise.objects.get().right_solutions == live.right_solutions
    assert graded[-2:] == [right[0]["code"], right[1]["code"]]


def test_right_variants_that_pass_go_live_with_the_version(
    live, django_capture_on_commit_callbacks
):
    right = [{"name": "math", "code": GOOD}]
    _, status = admin_save(django_capture_on_commit_callbacks, right_solutions=right)
    assert status == ExerciseVersion.Status.LIVE
    assert Exercise.objects.get().right_solutions == right


def test_a_change_of_words_goes_live_without_grading(
    live, graded, django_capture_on_commit_callbacks
):
    outcome, status = admin_save(
        django_capture_on_commit_callbacks, title="Count one transformer block"
    )
    assert status is None and graded == []
    assert not outcome.verifying
    assert "version 2 is live" in outcome.message
    row = Exercise.objects.get()
    assert (row.title, row.version) == ("Count one transformer block", 2)


def test_unpublishing_is_immediate_even_when_never_verified(
    block_exercise, graded, django_capture_on_commit_callbacks
):
    outcome, status = admin_save(django_capture_on_commit_callbacks, published=False)
    assert graded == [] and status is None
    assert Exercise.objects.get().published is False


def test_a_new_exercise_is_not_linked_until_its_first_version_verifies(
    lesson, learner, client, django_capture_on_commit_callbacks
):
    exercise = Exercise(
        slug="new-one",
        title="A new one",
        lesson=lesson,
        harness="block-param-count",
        entry_point="block_param_count",
        signature="block_param_count(n_embd) -> int",
        prompt="Count.",
        starter="def block_param_count(n_embd):\n    ...\n",
        solution=BAD,
        published=True,
    )
    sent = []
    with django_capture_on_commit_callbacks(execute=True):
        outcome = versions.exercise_save(
            exercise=exercise, actor=None, creating=True, send=sent.append
        )
    assert "stays unpublished until this version passes" in outcome.message
    client.force_login(learner)
    lesson_url = reverse("lesson", args=["count-block"])
    exercise_url = reverse("exercise", args=["new-one"])
    assert exercise_url not in client.get(lesson_url).content.decode()
    assert client.get(exercise_url).status_code == 404

    versions.exercise_version_verify(version_id=sent[0])  # BAD: fails
    assert Exercise.objects.get(slug="new-one").version == 0
    assert exercise_url not in client.get(lesson_url).content.decode()

    admin_save(django_capture_on_commit_callbacks, slug="new-one", solution=GOOD)
    row = Exercise.objects.get(slug="new-one")
    assert (row.version, row.published) == (2, True)
    assert exercise_url in client.get(lesson_url).content.decode()
    assert client.get(exercise_url).status_code == 200


def test_a_graded_submission_records_the_version(live, learner):
    from grading_engine.grading import Verdict

    from grader.submission_grading import _save

    live.version = 4
    live.save()
    submission = Submission.objects.create(
        user=learner, exercise=live, code=GOOD, seed=1, status="running"
    )
    _save(submission, Verdict("passed", 1.0, []))
    assert Submission.objects.get().exercise_version == 4


def test_the_admin_shows_progress_and_one_message(
    live, admin_user, client, django_capture_on_commit_callbacks
):
    client.force_login(admin_user)
    live.solution = BAD
    with django_capture_on_commit_callbacks(execute=False):
        outcome = versions.exercise_save(
            exercise=live, actor=admin_user, creating=False, send=lambda pk: None
        )
    url = reverse("admin:grader_exercise_verification", args=[live.pk])
    state = client.get(url).json()
    assert state["live_version"] == 1
    assert state["draft"] == {
        "version": 2,
        "status": "queued",
        "done": 0,
        "total": 2,
        "step": "",
        "failed": [],
        "terminal": False,
        "stale": False,
    }
    assert "verifying, 0 of 2 grades done" in state["html"]
    page = client.get(reverse("admin:grader_exercise_change", args=[live.pk]))
    text = page.content.decode()
    assert "# BAD" in text  # the form shows the draft being verified
    assert "verifying, 0 of 2 grades done" in text
    assert outcome.version.number == 2

    learner_client = APIClient()
    assert learner_client.get(url).status_code == 302  # admin login, not data


def test_a_verification_nobody_runs_is_reported_as_stale(
    live, admin_user, client, django_capture_on_commit_callbacks
):
    live.solution = GOOD + "# waiting\n"
    with django_capture_on_commit_callbacks(execute=False):
        versions.exercise_save(
            exercise=live, actor=admin_user, creating=False, send=lambda pk: None
        )
    ExerciseVersion.objects.update(
        created_at=timezone.now() - versions.STALE_AFTER - timedelta(seconds=1)
    )
    client.force_login(admin_user)
    url = reverse("admin:grader_exercise_verification", args=[live.pk])
    state = client.get(url).json()
    assert state["draft"]["stale"] is True
    assert "is a grading worker running? Save again" in state["html"]
