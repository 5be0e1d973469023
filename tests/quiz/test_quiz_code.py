"""A code exercise as a quiz question: written in the quiz's time, graded by
the grader only once the feedback policy lets its checks show.

The grader's pages and API show a submission's checks at once, so the
structural proof of integrity is that no Submission row exists before the
policy opens. One test grades through the session's warm worker; the others
need no worker (a submission stays queued, or its verdict is written as the
worker writes it and the score listener is called as the worker calls it).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import yaml
from django.test import Client

from grader.models import Exercise, Submission
from quiz.models import Question
from teaching.models import QuizAttempt, QuizCodeAnswer
from teaching.quizzes.code import code_sweep
from teaching.quizzes.instructor_views import parse_slots
from teaching.quizzes.item_analysis.report import insights, quiz_analysis
from teaching.quizzes.scoring import code_verdicts
from tests.authored_spec import diagnoses_of
from tests.conftest import PROJECT_ROOT
from tests.pipeline.conftest import wait_for
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import submit
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import NOW, api, create, start

RIGHT = "def block_param_count(n_embd):\n    return 12 * n_embd**2 + 13 * n_embd\n"
WRONG = "def block_param_count(n_embd):\n    return 12 * n_embd**2\n"


def code_quiz(world, **changes) -> dict:
    choice = Question.objects.get(lesson__slug="first-lesson", kind="choice")
    return create(
        world,
        shuffle=False,
        slots=[
            {"points": 2, "pool": {"exercises": ["block-param-count"]}},
            {"points": 1, "pool": {"questions": [choice.pk]}},
        ],
        **changes,
    )


def state(user, attempt_id: int) -> dict:
    response = api(user).get(f"/api/v1/attempts/{attempt_id}/")
    assert response.status_code == 200
    return response.json()


def save(user, attempt_id: int, answers: dict):
    return api(user).patch(
        f"/api/v1/attempts/{attempt_id}/", {"answers": answers}, format="json"
    )


def graded(user) -> list[Submission]:
    return list(Submission.objects.filter(user=user))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.xdist_group("warm-workers")  # the shared warm worker
def test_a_real_worker_grades_the_code_once_the_attempt_is_submitted(
    warm, world, quiz_course, block_exercise
):
    warm.ready(slots=1)
    quiz = code_quiz(world)
    attempt = start(world.lea, quiz["id"]).json()
    code = attempt["questions"][0]
    assert (code["kind"], code["starter"]) == ("code", block_exercise.starter)
    assert save(world.lea, attempt["id"], {"1": RIGHT, "2": 1}).status_code == 200
    # Saved within the time, graded by no one yet: nothing of it in the grader.
    assert graded(world.lea) == []
    assert "feedback" not in state(world.lea, attempt["id"])["questions"][0]
    api(world.lea).post(f"/api/v1/attempts/{attempt['id']}/submit/")
    (submission,) = graded(world.lea)
    assert (submission.code, submission.exercise_id) == (RIGHT, block_exercise.pk)
    # The worker's verdict reaches the attempt through the score listener.
    wait_for(
        lambda: QuizAttempt.objects.get(pk=attempt["id"]).results[0] == 1.0,
        timeout=60,
        what="the verdict to rescore the attempt",
    )
    done = state(world.lea, attempt["id"])
    feedback = done["questions"][0]["feedback"]
    assert feedback["status"] == "passed" and feedback["score"] == 1.0
    assert feedback["checks"] and all(c["passed"] for c in feedback["checks"])
    assert done["grading"] is False and done["points"] == 2.0 + (
        1.0 if done["questions"][1]["feedback"]["correct"] else 0.0
    )
    html = _page(world.lea, f"/quizzes/attempts/{attempt['id']}/")
    assert "Passed." in html and f"/submissions/{submission.pk}/" in html


def _page(user, url: str) -> str:
    client = Client()
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db
def test_after_close_the_code_waits_for_the_close_then_its_verdict_counts(
    world, quiz_course, block_exercise, settings
):
    quiz = code_quiz(world, feedback="after_close")
    attempt = start(world.lea, quiz["id"]).json()
    save(world.lea, attempt["id"], {"1": WRONG})
    api(world.lea).post(f"/api/v1/attempts/{attempt['id']}/submit/")
    html = _page(world.lea, f"/quizzes/attempts/{attempt['id']}/")
    assert WRONG.split("\n")[1].strip() in html  # their own code, shown back
    assert 'id="fb-1"' not in html and graded(world.lea) == []
    assert code_sweep() == 0 and graded(world.lea) == []
    closed = NOW + timedelta(days=1, seconds=1)
    assert code_sweep(now=closed) == 1 and code_sweep(now=closed) == 0
    (submission,) = graded(world.lea)
    assert submission.code == WRONG and submission.status == "queued"
    # The verdict as a worker saves it, then the listener as it runs it.
    Submission.objects.filter(pk=submission.pk).update(
        status="failed",
        score=0.5,
        checks=[
            {"name": "weights", "passed": True, "message": ""},
            {
                "name": "biases counted",
                "passed": False,
                "message": "12 n^2 leaves out the 13 n biases.",
                "diagnosis": "tied-head-counted-twice",
            },
        ],
    )
    code_verdicts([world.lea.pk])
    row = QuizCodeAnswer.objects.get()
    attempt_row = QuizAttempt.objects.get(pk=attempt["id"])
    assert (row.fraction, attempt_row.results[0], attempt_row.points) == (
        0.5,
        0.5,
        1.0,
    )
    # The item analysis names the failed check's diagnosis for the code question.
    found = insights(quiz_analysis(QuizAttempt.objects.get().quiz))
    (code_insight,) = found["x:block-param-count"]
    assert code_insight["diagnosis"] == "tied-head-counted-twice"
    assert "biases counted" in code_insight["text"]


@pytest.mark.django_db
def test_immediate_feedback_grades_code_at_its_check_and_throttles_wait(
    world, quiz_course, block_exercise, settings
):
    settings.SUBMISSION_MAX_OUTSTANDING = 1
    quiz = code_quiz(world, feedback="immediate")
    attempt = start(world.lea, quiz["id"]).json()
    # The learner's own queue is full: the code is saved, and waits.
    earlier = submit(world.lea, block_exercise, "queued")
    assert save(world.lea, attempt["id"], {"1": RIGHT}).status_code == 200
    assert graded(world.lea) == [earlier]
    feedback = state(world.lea, attempt["id"])["questions"][0]["feedback"]
    assert feedback["status"] == "waiting"
    # Checked is final, as for any question with immediate feedback.
    again = save(world.lea, attempt["id"], {"1": WRONG})
    assert again.status_code == 400 and "was checked" in str(again.json())
    Submission.objects.filter(pk=earlier.pk).update(status="passed", score=1.0)
    assert code_sweep() == 1
    (sent,) = [s for s in graded(world.lea) if s.pk != earlier.pk]
    assert sent.code == RIGHT
    feedback = state(world.lea, attempt["id"])["questions"][0]["feedback"]
    assert feedback["status"] == "queued" and feedback["submission"] == str(sent.pk)
    # An instructor's preview is never final: its code goes at its submit.
    preview = start(world.owner, quiz["id"]).json()
    assert save(world.owner, preview["id"], {"1": RIGHT}).status_code == 200
    assert graded(world.owner) == []
    api(world.owner).post(f"/api/v1/attempts/{preview['id']}/submit/")
    assert len(graded(world.owner)) == 1


@pytest.mark.django_db
def test_code_answers_are_checked_on_save_and_work_without_javascript(
    world, quiz_course, block_exercise, settings
):
    settings.SUBMISSION_MAX_BYTES = 200
    quiz = code_quiz(world)
    client = Client()
    client.force_login(world.lea)
    assert client.post(f"/quizzes/{quiz['id']}/start/").status_code == 302
    attempt_id = QuizAttempt.objects.get(learner=world.lea).pk
    url = f"/quizzes/attempts/{attempt_id}/"
    html = _page(world.lea, url)
    assert 'textarea id="a-1" name="q-1"' in html and "    ...\n</textarea>" in html
    # The starter sent back unchanged is no answer; code is saved as typed.
    client.post(url, {"q-1": block_exercise.starter, "action": "save"})
    assert QuizAttempt.objects.get(pk=attempt_id).answers == {}
    client.post(url, {"q-1": RIGHT, "action": "save"})
    assert QuizAttempt.objects.get(pk=attempt_id).answers["1"]["value"] == RIGHT
    # Too big for the grader: refused now, naming the question; the saved stays.
    big = save(world.lea, attempt_id, {"1": RIGHT + "#" * 300})
    assert big.status_code == 400 and "Question 1 (slot 1)" in str(big.json())
    number = save(world.lea, attempt_id, {"1": 12})
    assert number.status_code == 400 and "Python code" in str(number.json())
    assert QuizAttempt.objects.get(pk=attempt_id).answers["1"]["value"] == RIGHT
    # Instructors write the slot as a line, and see it among the variants.
    (spec,) = parse_slots("2 x1: exercise:block-param-count")
    assert spec.pool == {"exercises": ["block-param-count"]}
    variants = _page(world.owner, f"/instructor/quizzes/{quiz['id']}/variants/")
    assert "Count one block" in variants and "graded by the course" in variants
    bad = api(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/quizzes/",
        {**_body(), "slots": [{"pool": {"exercises": ["no-such"]}}]},
        format="json",
    )
    assert bad.status_code == 400 and "No exercise no-such" in str(bad.json())


def _body() -> dict:
    return {
        "title": "Q",
        "opens_at": NOW.isoformat(),
        "closes_at": (NOW + timedelta(days=1)).isoformat(),
    }


@pytest.mark.django_db
def test_code_of_an_attempt_with_attempts_left_waits_for_the_last(
    world, quiz_course, block_exercise
):
    """With feedback per attempt, attempt 1's checks would answer attempt 2:
    its code goes to the grader once the learner has no attempt left (at the
    last submit), and the periodic sweep never sends it before."""
    quiz = code_quiz(world, attempts_allowed=2)
    first = start(world.lea, quiz["id"]).json()
    save(world.lea, first["id"], {"1": WRONG})
    api(world.lea).post(f"/api/v1/attempts/{first['id']}/submit/")
    code_sweep()
    assert graded(world.lea) == []  # an attempt left: nothing graded, nothing shown
    assert QuizAttempt.objects.get(pk=first["id"]).code_waiting
    second = start(world.lea, quiz["id"]).json()
    save(world.lea, second["id"], {"1": RIGHT})
    code_sweep()
    assert graded(world.lea) == []
    api(world.lea).post(f"/api/v1/attempts/{second['id']}/submit/")
    assert sorted(s.code for s in graded(world.lea)) == sorted([RIGHT, WRONG])
    assert not QuizAttempt.objects.filter(code_waiting=True).exists()


@pytest.mark.django_db
def test_code_waiting_for_its_learner_never_fills_a_sweep(
    world, quiz_course, block_exercise, make_user, settings, monkeypatch
):
    """Attempts whose learner still has an attempt left are no candidates, so
    a sweep's limit is spent on code that is due: here one learner's two
    answers the grader throttled at the last submit, behind two that wait."""
    from teaching.cohorts import cohort_join
    from teaching.quizzes import code as code_module

    quiz = code_quiz(world, attempts_allowed=2)
    for learner in (world.lea, world.leo):  # an attempt left: not due
        attempt = start(learner, quiz["id"]).json()
        save(learner, attempt["id"], {"1": WRONG})
        api(learner).post(f"/api/v1/attempts/{attempt['id']}/submit/")
    last = make_user("liv")
    cohort_join(cohort=world.cohort, user=last)
    for n in (1, 2):  # both attempts used: due at the second submit...
        attempt = start(last, quiz["id"]).json()
        save(last, attempt["id"], {"1": RIGHT if n == 2 else WRONG})
        settings.SUBMISSION_MAX_OUTSTANDING = 0 if n == 2 else 10
        api(last).post(f"/api/v1/attempts/{attempt['id']}/submit/")
    assert graded(last) == []  # ...but throttled: it waits for the sweep
    settings.SUBMISSION_MAX_OUTSTANDING = 10
    monkeypatch.setattr(code_module, "SWEEP_LIMIT", 2)  # liv's two attempts
    code_sweep()
    assert {s.code for s in graded(last)} == {RIGHT, WRONG}
    assert graded(world.lea) == graded(world.leo) == []


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.xdist_group("warm-workers")  # the shared warm worker
def test_an_authored_exercise_as_a_code_slot_is_graded_and_its_mistake_analysed(
    warm, world, quiz_course
):
    """An exercise authored as a declaration is a quiz's code question like
    a built-in one: the worker grades the answer through the row's
    declaration, the verdict scores the attempt, and the item analysis
    counts the failed check under the known mistake's diagnosis."""
    warm.ready(slots=1)
    spec = yaml.safe_load(
        (PROJECT_ROOT / "content/exercises/top-k-filter.yaml").read_text()
    )
    diagnoses_of(spec)
    fields = ("slug", "title", "harness", "entry_point", "signature", "prompt")
    exercise = Exercise.objects.create(
        **{name: spec[name] for name in fields},
        starter=spec["starter"],
        solution=spec["solution"],
        wrong_solutions=spec["wrong_solutions"],
        declaration=spec["declaration"],
    )
    quiz = create(
        world,
        shuffle=False,
        slots=[{"points": 2, "pool": {"exercises": [exercise.slug]}}],
    )
    smallest = spec["wrong_solutions"][0]
    attempt = start(world.lea, quiz["id"]).json()
    assert attempt["questions"][0]["starter"] == spec["starter"]
    save(world.lea, attempt["id"], {"1": smallest["code"]})
    api(world.lea).post(f"/api/v1/attempts/{attempt['id']}/submit/")
    wait_for(
        lambda: QuizCodeAnswer.objects.filter(fraction__isnull=False).exists(),
        timeout=120,
        what="the verdict to score the code answer",
    )
    (submission,) = graded(world.lea)
    assert submission.status == "failed", submission.checks
    fraction = QuizCodeAnswer.objects.get().fraction
    assert QuizAttempt.objects.get(pk=attempt["id"]).results[0] == fraction < 1.0
    found = insights(quiz_analysis(QuizAttempt.objects.get().quiz))
    (insight,) = found[f"x:{exercise.slug}"]
    assert insight["diagnosis"] == smallest["diagnosis"], found
    # The check that named it, not the "values" check before it.
    assert "likely mistake" in insight["text"], insight
