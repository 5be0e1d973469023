"""A hostile learner sitting a held-back quiz: every other door to its keys.

Each test is an attack reproduced as a learner would make it (HTTP to the
pages and the API, never a service call), then the same door tried again
once the policy opens: shut while it must be, open after.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from grader.models import Submission
from quiz.learning import review
from quiz.models import ReviewCard
from teaching.models import Quiz, QuizAttempt
from teaching.quizzes.services import scores_release
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, submit
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, create, right_answers, scored_questions

pytestmark = pytest.mark.django_db
KEYS = ("The answer is", "b is right.", "12d^2 + 13d.", "7,087,872", "7087872")


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def assert_no_key(body: str) -> None:
    for key in KEYS:
        assert key not in body, (key, body[:400])


def held_quiz(world, feedback="after_close", **changes) -> dict:
    """The choice and numeric self-checks of first-lesson, and exercise ex-a."""
    questions = scored_questions()
    slots = [
        {"points": 1, "pool": {"questions": [questions["choice"].pk]}},
        {"points": 1, "pool": {"questions": [questions["numeric"].pk]}},
        {"points": 1, "pool": {"exercises": ["ex-a"]}},
    ]
    return create(world, feedback=feedback, slots=slots, shuffle=False, **changes)


def test_a_self_check_of_an_open_held_back_attempt_shows_no_key(world, quiz_course):
    questions = scored_questions()
    choice, numeric = questions["choice"], questions["numeric"]
    lesson = choice.lesson
    answer(world.lea, numeric, correct=False)  # answered before: a review card
    review.question_card_schedule(user=world.lea, question=numeric)
    quiz = held_quiz(world)
    lea = browser(world.lea)
    state = api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()

    url = reverse("question-answer", args=[lesson.slug, choice.pk])
    for accept in ("text/html", "application/json"):
        for given in ("0", "1"):  # a verdict per option is a key too
            shut = lea.post(url, {"answer": given}, HTTP_ACCEPT=accept)
            assert shut.status_code == 403
            body = shut.content.decode()
            assert_no_key(body)
            assert "Quiz 1" in body and "once you submit your attempt" in body
            assert "Right." not in body and "Not quite." not in body
    page = lea.get(lesson.get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    assert_no_key(html)  # the earlier answer's feedback is hidden too
    assert html.count('class="notice exam-locked"') == 2  # the two quiz items
    review_page = lea.get(reverse("review")).content.decode()
    assert "How many parameters per block?" not in review_page
    card = ReviewCard.objects.get(user=world.lea, question=numeric)
    rated = lea.post(reverse("review-rate", args=[card.pk]), {"rating": "3"})
    assert (
        rated.status_code == 403 and "How many parameters" not in rated.content.decode()
    )
    exported = lea.get(reverse("progress-export"))
    assert exported.status_code == 403
    assert_no_key(exported.content.decode())
    # An answer sent while logged out is judged after the log-in: not now.
    visitor = Client()
    visitor.post(url, {"answer": "1"})
    visitor.force_login(world.lea)
    kept = visitor.get(lesson.get_absolute_url())
    assert kept.status_code == 400
    assert "once you submit your attempt" in kept.content.decode()
    assert_no_key(kept.content.decode())
    # The instructor's views of the quiz are no door either.
    for page_url in (
        reverse("instructor-quiz-variants", args=[quiz["id"]]),
        reverse("instructor-quiz-questions", args=[quiz["id"]]),
        reverse("instructor-quiz-attempt", args=[state["id"]]),
        reverse("instructor-quiz-bank", args=[world.cohort.pk]),
    ):
        refused = lea.get(page_url)
        assert refused.status_code == 403, page_url
        assert_no_key(refused.content.decode())
    for api_url in (
        f"/api/v1/quizzes/{quiz['id']}/questions/",
        f"/api/v1/quizzes/{quiz['id']}/results/",
        f"/api/v1/attempts/{state['id']}/review/",
        "/api/v1/quiz-bank/?q=Pick",
    ):
        refused = api(world.lea).get(api_url)
        assert refused.status_code == 403, api_url
        assert_no_key(refused.content.decode())
    # Another learner, not sitting the quiz, practises as ever.
    open_ = browser(world.leo).post(
        url, {"answer": "1"}, HTTP_ACCEPT="application/json"
    )
    assert open_.status_code == 200 and open_.json()["correct"] is True

    api(world.lea).post(f"/api/v1/attempts/{state['id']}/submit/")
    after = lea.post(url, {"answer": "1"}, HTTP_ACCEPT="application/json")
    assert after.status_code == 200  # practice again once the attempt is in
    assert lea.get(reverse("progress-export")).status_code == 200


def test_exam_mode_shuts_the_quizs_exercise_however_it_is_reached(world, quiz_course):
    exercise = quiz_course["exercises"]["ex-a"]
    earlier = submit(
        world.lea,
        exercise,
        "passed",
        checks=[{"name": "c", "passed": True, "message": "ok"}],
    )
    quiz = held_quiz(world, feedback="after_submit")
    lea = browser(world.lea)
    client = api(world.lea)
    state = client.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    assert state["state"] == "in_progress"

    for _ in range(5):  # the junk that used to unlock the reference solution
        refused = client.post(
            f"/api/v1/exercises/{exercise.slug}/submissions/",
            {"code": "x = 1\n"},
            format="json",
        )
        assert refused.status_code == 403
        assert "Quiz 1" in refused.json()["detail"]
    assert not Submission.objects.exclude(pk=earlier.pk).exists()
    page = lea.get(reverse("exercise", args=[exercise.slug]))
    assert page.status_code == 403
    body = page.content.decode()
    assert exercise.solution not in body and "return 1" not in body
    posted = lea.post(reverse("exercise", args=[exercise.slug]), {"code": "x = 1\n"})
    assert posted.status_code == 403
    for url in (
        f"/api/v1/exercises/{exercise.slug}/",
        f"/api/v1/exercises/{exercise.slug}/local-check/",  # the visible cases' values
        f"/api/v1/submissions/{earlier.pk}/",
        f"/api/v1/submissions/{earlier.pk}/gradescope/",
        f"/api/v1/submissions/{earlier.pk}/events/",
    ):
        response = client.get(url)
        assert response.status_code == 403, url
        assert "return 1" not in response.content.decode()
    detail = lea.get(reverse("submission", args=[earlier.pk]))
    assert detail.status_code == 403 and "return 1" not in detail.content.decode()
    # Another exercise of the course is not part of the quiz: open.
    assert lea.get(reverse("exercise", args=["ex-b"])).status_code == 200
    # The instructor reading the learner's submission is not sitting anything.
    assert (
        browser(world.owner).get(reverse("submission", args=[earlier.pk])).status_code
        == 200
    )

    client.post(f"/api/v1/attempts/{state['id']}/submit/")
    assert lea.get(reverse("exercise", args=[exercise.slug])).status_code == 200
    assert client.get(f"/api/v1/submissions/{earlier.pk}/").status_code == 200


def test_a_preview_or_practice_quiz_shuts_nothing(world, quiz_course):
    questions = scored_questions()
    url = reverse("question-answer", args=["first-lesson", questions["choice"].pk])
    practice = held_quiz(world, feedback="immediate")
    api(world.lea).post(f"/api/v1/quizzes/{practice['id']}/attempts/")
    shown = browser(world.lea).post(
        url, {"answer": "1"}, HTTP_ACCEPT="application/json"
    )
    assert shown.status_code == 200  # immediate feedback holds nothing back
    held = held_quiz(world, title="Held")
    api(world.owner).post(f"/api/v1/quizzes/{held['id']}/attempts/")  # a preview
    mine = browser(world.owner).post(
        url, {"answer": "1"}, HTTP_ACCEPT="application/json"
    )
    assert mine.status_code == 200


def test_feedback_per_attempt_waits_for_the_last_attempt(world, quiz_course):
    """Attempt 1's keys, read in another tab during attempt 2, were the hole."""
    quiz = create(world, attempts_allowed=2, shuffle=False)
    client = api(world.lea)
    first = client.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    client.patch(
        f"/api/v1/attempts/{first['id']}/",
        {"answers": right_answers(first["id"])},
        format="json",
    )
    done = client.post(f"/api/v1/attempts/{first['id']}/submit/").json()
    assert done["score"] is None and "feedback" not in json.dumps(done["questions"])
    second = client.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    assert second["number"] == 2
    for url in (
        f"/api/v1/attempts/{first['id']}/",
        f"/quizzes/attempts/{first['id']}/",
    ):
        body = (client if url.startswith("/api") else browser(world.lea)).get(url)
        text = body.content.decode()
        assert "right_answer" not in text and "(right answer)" not in text
        assert "b is right." not in text and "12d^2 + 13d." not in text
    home = browser(world.lea).get(reverse("home")).content.decode()
    assert "100%" not in home
    client.post(f"/api/v1/attempts/{second['id']}/submit/")
    opened = client.get(f"/api/v1/attempts/{first['id']}/").json()
    assert opened["score"] == 1.0 and opened["questions"][0]["feedback"]["correct"]


def test_closing_early_ends_running_attempts_and_only_then_opens_feedback(
    world, quiz_course
):
    quiz = create(world, feedback="after_close", shuffle=False, time_limit=None)
    lea, leo = api(world.lea), api(world.leo)
    one = lea.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    lea.post(f"/api/v1/attempts/{one['id']}/submit/")
    two = leo.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    leo.patch(
        f"/api/v1/attempts/{two['id']}/",
        {"answers": {"2": right_answers(two["id"])["2"]}},
        format="json",
    )
    soon = timezone.now() + timedelta(minutes=2)
    moved = api(world.owner).patch(
        f"/api/v1/quizzes/{quiz['id']}/", {"closes_at": soon.isoformat()}, format="json"
    )
    assert moved.status_code == 200
    # leo's running attempt now ends at the new close, not a day later.
    assert QuizAttempt.objects.get(pk=two["id"]).deadline <= soon
    assert lea.get(f"/api/v1/attempts/{one['id']}/").json()["score"] is None
    past = timezone.now() - timedelta(seconds=1)
    Quiz.objects.filter(pk=quiz["id"]).update(
        opens_at=past - timedelta(hours=1), closes_at=past
    )
    QuizAttempt.objects.filter(pk=two["id"]).update(deadline=past)
    late = leo.patch(
        f"/api/v1/attempts/{two['id']}/", {"answers": {"1": "5"}}, format="json"
    )
    assert late.status_code == 409  # nobody answers after the close
    assert lea.get(f"/api/v1/attempts/{one['id']}/").json()["score"] == 0.0
    mine = leo.get(f"/api/v1/attempts/{two['id']}/").json()
    assert mine["state"] == "submitted" and mine["points"] == 1.0


def test_an_accommodation_holds_everyones_feedback_and_stays_private(
    world, quiz_course
):
    quiz = create(world, feedback="after_close", shuffle=False)
    later = timezone.now() + timedelta(days=9, hours=3)
    granted = api(world.owner).post(
        f"/api/v1/quizzes/{quiz['id']}/accommodations/",
        {"learner": "leo", "closes_at": later.isoformat()},
        format="json",
    )
    assert granted.status_code == 200
    lea = api(world.lea)
    one = lea.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    lea.post(f"/api/v1/attempts/{one['id']}/submit/")
    past = timezone.now() - timedelta(seconds=1)
    Quiz.objects.filter(pk=quiz["id"]).update(
        opens_at=past - timedelta(hours=1), closes_at=past
    )
    # The quiz closed for lea, not for leo: nobody's feedback opens yet.
    assert lea.get(f"/api/v1/attempts/{one['id']}/").json()["score"] is None
    for url in (f"/quizzes/{quiz['id']}/", f"/quizzes/attempts/{one['id']}/"):
        html = browser(world.lea).get(url).content.decode()
        for shown in (later.isoformat()[:16], later.strftime("%Y-%m-%d %H:%M")):
            assert shown not in html, url  # leo's later close is his own
        assert "closed for everyone" in html
    leo_page = browser(world.leo).get(f"/quizzes/{quiz['id']}/").content.decode()
    assert "later for you" in leo_page


def test_scores_follow_the_policy_on_every_surface(world, quiz_course):
    from teaching.assignments.services import ItemSpec, assignment_create

    quiz = create(world, feedback="after_close", shuffle=False)
    assignment = assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=timezone.now() - timedelta(days=1),
        due_at=timezone.now() + timedelta(days=2),
        items=[ItemSpec("quiz", str(quiz["id"]))],
    )
    client = api(world.lea)
    state = client.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    client.patch(
        f"/api/v1/attempts/{state['id']}/",
        {"answers": right_answers(state["id"])},
        format="json",
    )
    client.post(f"/api/v1/attempts/{state['id']}/submit/")
    owner = browser(world.owner)
    surfaces = {
        "home": (browser(world.lea), reverse("home")),
        "progress": (browser(world.lea), reverse("progress")),
        "gradebook": (owner, reverse("instructor-gradebook", args=[world.cohort.pk])),
        "csv": (
            owner,
            reverse("instructor-gradebook-csv", args=[world.cohort.pk, "plain"]),
        ),
        "canvas": (
            owner,
            reverse("instructor-gradebook-csv", args=[world.cohort.pk, "canvas"]),
        ),
        "assignment api": (
            api(world.owner),
            f"/api/v1/assignments/{assignment.pk}/gradebook/",
        ),
    }

    def bodies():
        return {
            name: who.get(url).content.decode() for name, (who, url) in surfaces.items()
        }

    # A figure standing alone: not a timestamp's "13:14:04.0123" or an id.
    shown = re.compile(
        r'(?<![\w.:-])(100%|100\.0+|1\.00+|4\.0+)(?![\w:]|\.\d)|"score": 1\.0'
    )
    for name, body in bodies().items():
        assert not shown.findall(body), (name, shown.findall(body))
    assert client.get(f"/api/v1/attempts/{state['id']}/").json()["score"] is None
    past = timezone.now() - timedelta(seconds=1)
    Quiz.objects.filter(pk=quiz["id"]).update(
        opens_at=past - timedelta(hours=1), closes_at=past
    )
    assert scores_release() == 1 and scores_release() == 0  # announced once
    opened = bodies()
    assert "lea,100.0,100.0," in opened["csv"]
    # The quiz counts inside its assignment's column: one LMS column per quiz.
    assert "lea,,,lea,Spring 2026,1.0" in opened["canvas"]
    assert f"[quiz {quiz['id']}]" not in opened["canvas"]
    lea_row = json.loads(opened["assignment api"])["learners"][0]
    assert lea_row["items"][0]["score"] == 1.0
    assert client.get(f"/api/v1/attempts/{state['id']}/").json()["score"] == 1.0


def test_a_self_check_slot_in_a_held_back_quiz_is_marked_practice(world, quiz_course):
    quiz = held_quiz(world)
    owner = browser(world.owner)
    for url in (
        reverse("instructor-quiz", args=[quiz["id"]]),
        reverse("instructor-quiz-variants", args=[quiz["id"]]),
    ):
        page = owner.get(url).content.decode().lower()
        assert "practice, not secure" in page, url
    secure = create(
        world,
        title="Templates only",
        feedback="after_close",
        slots=[{"points": 1, "pool": {"templates": ["params-of-a-model"]}}],
    )
    page = owner.get(reverse("instructor-quiz", args=[secure["id"]])).content.decode()
    assert "practice, not secure" not in page


def test_sitting_a_held_back_quiz_shuts_every_other_quiz(world, quiz_course):
    """A practice quiz checks answers at once, and a finished quiz shows its
    keys: either may hold the held-back quiz's questions, so while it runs
    every other quiz of the learner is shut, its pages and its API alike."""
    questions = scored_questions()
    url = reverse("question-answer", args=["first-lesson", questions["choice"].pk])
    practice = held_quiz(world, feedback="immediate", title="Practice")
    client = api(world.lea)
    mine = client.post(f"/api/v1/quizzes/{practice['id']}/attempts/").json()
    held = held_quiz(world, title="Exam")
    exam = client.post(f"/api/v1/quizzes/{held['id']}/attempts/")
    assert exam.status_code == 201
    lea = browser(world.lea)
    for response in (
        lea.get(reverse("quiz", args=[practice["id"]])),
        lea.get(reverse("quiz-attempt", args=[mine["id"]])),
        client.get(f"/api/v1/attempts/{mine['id']}/"),
        client.patch(
            f"/api/v1/attempts/{mine['id']}/", {"answers": {"1": 1}}, format="json"
        ),
        client.post(f"/api/v1/quizzes/{practice['id']}/attempts/"),
    ):
        assert response.status_code == 403
        body = response.content.decode()
        assert "Exam" in body and "b is right." not in body
    assert lea.post(url, {"answer": "1"}).status_code == 403
    assert lea.get(reverse("quiz", args=[held["id"]])).status_code == 200
    client.post(f"/api/v1/attempts/{exam.json()['id']}/submit/")
    assert client.get(f"/api/v1/attempts/{mine['id']}/").status_code == 200


def test_an_authored_exercise_in_a_held_back_quiz_shows_nothing_while_sat(
    world, quiz_course
):
    """The quiz's code slot is an authored exercise with its `course check`
    bundle built (its visible cases' right outputs) and a generator (which
    the bundle carries): mid-attempt, no page or endpoint gives the
    declaration, the generator, the reference or the bundle, and the
    admin's pages (its verification values) are an admin's only."""
    from grader.local_checks import local_check_key
    from grader.models import LocalCheck

    exercise = quiz_course["exercises"]["ex-a"]
    reference = "def f(x):\n    return x + 1  # THE-REFERENCE\n"
    exercise.harness, exercise.entry_point = "authored", "f"
    exercise.solution = reference
    exercise.wrong_solutions = []
    exercise.declaration = {
        "inputs": [{"name": "x", "tensor": [3]}, {"name": "w", "generated": True}],
        "generator": "import torch\n\n\ndef make_inputs(sizes, generator):\n"
        "    return {'w': torch.ones(3)}  # THE-GENERATOR\n",
        "cases": [{"name": "three", "sizes": {}}],
        "outputs": [{"name": "y"}, {"name": "dx", "gradient_of": "x"}],
    }
    exercise.save()
    key = local_check_key(exercise)
    LocalCheck.objects.create(exercise=exercise, key=key, blob=b"BUNDLE-BYTES")
    quiz = held_quiz(world, feedback="after_close")
    lea, client = browser(world.lea), api(world.lea)
    state = client.post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    assert state["state"] == "in_progress"
    for url in (
        f"/api/v1/exercises/{exercise.slug}/",
        f"/api/v1/exercises/{exercise.slug}/local-check/",
    ):
        response = client.get(url)
        assert response.status_code == 403, url
        assert b"BUNDLE-BYTES" not in response.content
    listed = client.get("/api/v1/exercises/").content.decode()
    for admin_page in (
        reverse("admin:grader_exercise_change", args=[exercise.pk]),
        reverse("admin:grader_exercise_verification", args=[exercise.pk]),
    ):
        response = lea.get(admin_page)
        assert response.status_code == 302, admin_page  # to the admin's log-in
        assert "/admin/login/" in response["Location"]
    for body in (
        listed,
        lea.get(reverse("exercise", args=[exercise.slug])).content.decode(),
        lea.get("/").content.decode(),
        lea.get("/progress/").content.decode(),
        lea.get(f"/quizzes/{quiz['id']}/").content.decode(),
        lea.get(f"/lessons/{exercise.lesson.slug}/").content.decode(),
    ):
        assert "THE-REFERENCE" not in body and "BUNDLE-BYTES" not in body
        assert "THE-GENERATOR" not in body and "make_inputs" not in body
        assert '"inputs"' not in body and "declaration" not in body
    client.post(f"/api/v1/attempts/{state['id']}/submit/")
    # Submitted, the exercise is the learner's again, bundle included.
    assert client.get(f"/api/v1/exercises/{exercise.slug}/local-check/").content == (
        b"BUNDLE-BYTES"
    )
