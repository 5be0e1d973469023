"""Inputs that answered 500 (issue 43): each is now a 400 naming the field,
and nothing is saved.

One test per input, on the door it came through (the API, an instructor's
form, a service a command calls). tests/grader/test_api_fuzz.py sends the
API ones again through the OpenAPI schema, with every operation fuzzed
around them; docs/security.md lists them.
"""

from __future__ import annotations

import ast
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from lms.targets import target_from_launch
from quiz.core.params import BIGINT_MAX
from quiz.models import ApiToken, AuditEntry, Question, QuestionAttempt
from teaching.models import (
    Assignment,
    Quiz,
    QuizAccommodation,
    QuizAttempt,
    QuizItemOverride,
    QuizQuestionChange,
    QuizRegrade,
    QuizSlot,
)
from teaching.quizzes import services
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import (
    FORM_TIME,
    NOW,
    create,
    quiz_body,
    quiz_form,
    right_answers,
    sit,
    start,
)

pytestmark = pytest.mark.django_db

PROJECT_ROOT = Path(__file__).resolve().parent.parent
HUGE = "1" * 5000  # past Python's 4,300-digit limit for int(text)


def client(user=None) -> Client:
    """A client that answers a crash with its 500 instead of raising it."""
    web = Client(raise_request_exception=False)
    if user is not None:
        web.force_login(user)
    return web


def send(web: Client, method: str, url: str, body: str):
    """A raw JSON body: json.dumps cannot even write a 5,000-digit integer."""
    return web.generic(method, url, body, content_type="application/json")


def quiz_post(world, body: dict):
    """The instructor creates a quiz through the API with `body`."""
    return send(
        client(world.owner),
        "POST",
        f"/api/v1/cohorts/{world.cohort.pk}/quizzes/",
        json.dumps(body),
    )


def quiz_rows() -> tuple[int, int, int]:
    return Quiz.objects.count(), QuizSlot.objects.count(), AuditEntry.objects.count()


def form(**changes) -> dict:
    """The instructor's quiz form, filled in, with one template slot."""
    return quiz_form(**{"slots": "2 x1: template:params-of-a-model\n", **changes})


# The JSON parser: every API endpoint, signed in or not ------------------------


def test_a_huge_integer_to_the_anonymous_token_endpoint_is_a_400(world):
    body = '{"username": "lea", "password": ' + HUGE + "}"
    response = send(client(), "POST", "/api/v1/auth/token/", body)
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {
        "password": ["password is an integer of 5,000 digits (at most 4,300)."]
    }
    assert not ApiToken.objects.exists()


def test_a_huge_integer_in_a_quiz_is_a_400_naming_where_it_is(world, quiz_course):
    url = f"/api/v1/cohorts/{world.cohort.pk}/quizzes/"
    before = quiz_rows()
    for name, path in (("attempts_allowed", "attempts_allowed"), ("slots", None)):
        body = quiz_body()
        if path:
            body[path] = "HUGE"
        else:
            body["slots"][1]["pool"]["questions"] = ["HUGE"]
        text = json.dumps(body).replace('"HUGE"', HUGE)
        response = send(client(world.owner), "POST", url, text)
        assert response.status_code == 400, response.content[:300]
        where = "attempts_allowed" if path else "slots[1].pool.questions[0]"
        assert response.json() == {
            name: [f"{where} is an integer of 5,000 digits (at most 4,300)."]
        }
    assert quiz_rows() == before


def test_numbers_json_has_not_are_a_400_naming_the_field(world, quiz_course):
    # json.loads reads them (1e999 as Infinity); the renderer cannot write
    # them back, and the service once raised TypeError for them as points.
    url = f"/api/v1/cohorts/{world.cohort.pk}/quizzes/"
    before = quiz_rows()
    for literal in ("NaN", "Infinity", "-Infinity", "1e999"):
        text = json.dumps(quiz_body()).replace('"points": 2', f'"points": {literal}')
        response = send(client(world.owner), "POST", url, text)
        assert response.status_code == 400, (literal, response.content[:300])
        said = response.json()["slots"][0]
        assert said.startswith("slots[0].points is "), said
    assert quiz_rows() == before


def test_a_lone_surrogate_as_an_answers_key_is_a_400(world, quiz_course):
    quiz = create(world)
    attempt = start(world.lea, quiz["id"]).json()
    url = f"/api/v1/attempts/{attempt['id']}/"
    # Either half of a pair, alone: not Unicode, so the renderer that echoed
    # it in "There is no question ..." could not encode the answer.
    for key in ("\\ud800", "\\udfff", "x\\ud83d"):
        body = '{"answers": {"' + key + '": 1, "1": 1}}'
        response = send(client(world.lea), "PATCH", url, body)
        assert response.status_code == 400, response.content[:300]
        assert response.json() == {
            "answers": [
                "answers is an object with a key holding a lone UTF-16 surrogate "
                "(\\ud800 to \\udfff), which is not Unicode."
            ]
        }
    row = QuizAttempt.objects.get(pk=attempt["id"])
    assert (row.answers, row.saves) == ({}, 0)


def test_a_surrogate_pair_is_text_like_any_other(world, quiz_course):
    body = json.dumps(quiz_body(title="Quiz \U0001f600"))  # written as \ud83d\ude00
    assert "\\ud83d\\ude00" in body
    url = f"/api/v1/cohorts/{world.cohort.pk}/quizzes/"
    response = send(client(world.owner), "POST", url, body)
    assert response.status_code == 201, response.content[:300]
    assert Quiz.objects.get().title == "Quiz \U0001f600"


# A quiz attempt's answers ------------------------------------------------------


def test_a_5000_digit_answers_key_is_a_400_that_does_not_echo_it(world, quiz_course):
    # It never named a question; the answer echoed it whole, twice (the
    # message and the key of `answers`): 10 kB back for any key sent.
    quiz = create(world)
    attempt = start(world.lea, quiz["id"]).json()
    url = f"/api/v1/attempts/{attempt['id']}/"
    body = json.dumps({"answers": {"9" * 5000: 1}})
    response = send(client(world.lea), "PATCH", url, body)
    assert response.status_code == 400, response.content[:300]
    data = response.json()
    assert data["saved"] == [] and "answers" in data
    assert "There is no question 99999999999999999999…" in data["detail"]
    assert len(response.content) < 1000
    row = QuizAttempt.objects.get(pk=attempt["id"])
    assert (row.answers, row.saves) == ({}, 0)


def test_a_5000_digit_choice_answer_is_no_option_not_pythons_message(
    world, quiz_course
):
    quiz = create(world, shuffle=False)
    attempt = start(world.lea, quiz["id"]).json()
    choice = next(q["number"] for q in attempt["questions"] if q["kind"] == "choice")
    url = f"/api/v1/attempts/{attempt['id']}/"
    body = json.dumps({"answers": {str(choice): "9" * 5000}})
    response = send(client(world.lea), "PATCH", url, body)
    assert response.status_code == 400
    said = response.json()["answers"][str(choice)]
    assert "Option 99999999999999999999… does not exist." in said
    assert "4300" not in said and "set_int_max_str_digits" not in said
    assert QuizAttempt.objects.get(pk=attempt["id"]).saves == 0


# Slot points and attempts allowed: the API, the form, the service ---------------


def test_bad_slot_points_through_the_api_are_a_400_naming_slots(world, quiz_course):
    # As text ("NaN") the serializer's float() takes them: the service judges.
    before = quiz_rows()
    for points in ("NaN", "Infinity", "-Infinity", 0, -1, 1000.5):
        body = quiz_body()
        body["slots"][0]["points"] = points
        response = quiz_post(world, body)
        assert response.status_code == 400, (points, response.content[:300])
        assert response.json() == {
            "slots": ["Slot 1: points is a number from 0 (excluded) to 1000."]
        }
    assert quiz_rows() == before


def test_attempts_allowed_out_of_range_is_a_400_naming_it(world, quiz_course):
    before = quiz_rows()
    for attempts in (0, -1, 101):
        response = quiz_post(world, quiz_body(attempts_allowed=attempts))
        assert response.status_code == 400, (attempts, response.content[:300])
        assert response.json() == {
            "attempts_allowed": ["attempts_allowed is a whole number from 1 to 100."]
        }
    assert quiz_rows() == before


def test_a_change_to_bad_points_or_attempts_saves_nothing(world, quiz_course):
    quiz = create(world)
    url = f"/api/v1/quizzes/{quiz['id']}/"
    stored = Quiz.objects.get(pk=quiz["id"])
    before = (stored.attempts_allowed, list(stored.slots.values_list("points")))
    audits = AuditEntry.objects.count()
    bad_slots = quiz_body()["slots"]
    bad_slots[2]["points"] = "Infinity"
    for body, field in (
        ({"attempts_allowed": 0}, "attempts_allowed"),
        ({"title": "New", "slots": bad_slots}, "slots"),
    ):
        response = send(client(world.owner), "PATCH", url, json.dumps(body))
        assert response.status_code == 400, response.content[:300]
        assert list(response.json()) == [field]
    stored.refresh_from_db()
    assert stored.title == "Quiz 1"
    assert (stored.attempts_allowed, list(stored.slots.values_list("points"))) == (
        before
    )
    assert AuditEntry.objects.count() == audits


def test_the_instructors_form_refuses_them_with_a_400(world, quiz_course):
    before = quiz_rows()
    for changes, field, said in [
        ({"slots": "0: template:params-of-a-model"}, "slots", "Slot 1: points"),
        ({"slots": "9" * 400 + ": template:params-of-a-model"}, "slots", "Slot 1"),
        ({"attempts_allowed": "0"}, "attempts_allowed", "attempts_allowed is"),
        ({"attempts_allowed": "101"}, "attempts_allowed", "attempts_allowed is"),
        ({"slots": f"1 x{HUGE}: template:params-of-a-model"}, "slots", "Line 1: draw"),
        ({"slots": "1: question:²"}, "slots", "Line 1: question ids are"),
        ({"slots": f"1: question:{2**70}"}, "slots", "Line 1: question ids are"),
        ({"slots": f"1: question:{HUGE}"}, "slots", "Line 1: question ids are"),
    ]:
        response = client(world.owner).post(
            f"/instructor/cohorts/{world.cohort.pk}/quizzes/new/", form(**changes)
        )
        assert response.status_code == 400, str(changes)[:80]
        error = response.context["error"]
        assert (response.context["field"], said in error) == (field, True), error
        assert error in response.content.decode()
    assert quiz_rows() == before


def test_the_service_refuses_them_for_any_caller(world, quiz_course):
    """What a management command or a shell gets: QuizError naming the field,
    the same check the API and the form reach."""
    spec = services.SlotSpec(pool={"templates": ["params-of-a-model"]})
    values = {
        "title": "By hand",
        "opens_at": NOW,
        "closes_at": NOW + timedelta(days=1),
    }
    cases = [
        ({"attempts_allowed": 0}, [spec], "attempts_allowed"),
        ({"attempts_allowed": True}, [spec], "attempts_allowed"),
        ({}, [services.SlotSpec(pool=spec.pool, points=float("nan"))], "slots"),
        ({}, [services.SlotSpec(pool=spec.pool, points=10**400)], "slots"),
        ({"time_limit": 10**400}, [spec], "time_limit"),
        ({}, [services.SlotSpec(pool=spec.pool, draw=True)], "slots"),
    ]
    before = quiz_rows()
    for extra, slots, field in cases:
        with pytest.raises(services.QuizError) as refused:
            services.quiz_create(
                cohort=world.cohort,
                actor=world.owner,
                slots=slots,
                **{**values, **extra},
            )
        assert refused.value.field == field, extra
    assert quiz_rows() == before


# Pool question ids -------------------------------------------------------------


def test_a_pool_question_id_past_bigint_never_reaches_the_database(world, quiz_course):
    # PostgreSQL compares it as numeric and finds nothing; SQLite (the
    # development default) raised OverflowError on it: a 500.
    before = quiz_rows()
    for question in (2**63, 2**70, 10**4000, 0, -5):
        body = quiz_body(slots=[{"pool": {"questions": [question]}}])
        with CaptureQueriesContext(connection) as queries:
            response = quiz_post(world, body)
        assert response.status_code == 400, response.content[:300]
        assert response.json() == {
            "slots": [
                "Slot 1: questions lists self-check ids: whole numbers from 1 to "
                f"{BIGINT_MAX}."
            ]
        }
        if question > BIGINT_MAX:
            sent = [q for q in queries.captured_queries if str(question) in q["sql"]]
            assert not sent, sent[0]["sql"][:200]
    assert quiz_rows() == before


# Learners named by id or username ------------------------------------------------


@pytest.mark.parametrize(
    "part, extra",
    [
        ("accommodations", {"time_factor": 2}),
        ("reopen", {"closes_at": "2099-01-01T00:00:00Z"}),
    ],
)
def test_a_5000_digit_learner_id_is_a_400_naming_learner(
    world, quiz_course, part, extra
):
    quiz = create(world)
    audits = AuditEntry.objects.count()
    response = send(
        client(world.owner),
        "POST",
        f"/api/v1/quizzes/{quiz['id']}/{part}/",
        json.dumps({"learner": HUGE, **extra}),
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {"learner": ["No learner '" + "1" * 40 + "…'."]}
    assert not QuizAccommodation.objects.exists()
    assert AuditEntry.objects.count() == audits


def test_a_5000_digit_learner_id_on_an_assignment_is_a_400(world, quiz_course):
    made = client(world.owner).post(
        f"/api/v1/cohorts/{world.cohort.pk}/assignments/",
        {
            "title": "Week 1",
            "opens_at": (NOW - timedelta(days=1)).isoformat(),
            "due_at": (NOW + timedelta(days=1)).isoformat(),
            "items": [{"kind": "lesson", "slug": "first-lesson"}],
        },
        content_type="application/json",
    )
    assert made.status_code == 201, made.content[:300]
    url = f"/api/v1/assignments/{made.json()['id']}/extensions/"
    body = json.dumps({"learner": HUGE, "due_at": "2099-01-01T00:00:00Z"})
    response = send(client(world.owner), "POST", url, body)
    assert response.status_code == 400, response.content[:300]
    assert list(response.json()) == ["learner"]


def test_a_close_before_the_quiz_opens_is_a_400_naming_closes_at(world, quiz_course):
    quiz = create(world)
    response = send(
        client(world.owner),
        "POST",
        f"/api/v1/quizzes/{quiz['id']}/accommodations/",
        json.dumps({"learner": "lea", "closes_at": "2000-01-01T00:00:00Z"}),
    )
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {
        "closes_at": ["A later close must be after the quiz opens."]
    }
    assert not QuizAccommodation.objects.exists()


# The same class nearby: numbers typed on pages and in regrades --------------------


def test_a_regrade_key_past_any_option_is_a_400_naming_answer(world, quiz_course):
    quiz = create(world)
    choice = Question.objects.get(lesson__slug="first-lesson", kind="choice")
    for answer in ("9" * 5000, "²"):
        body = {"question": f"q:{choice.pk}", "action": "key", "answer": answer}
        response = send(
            client(world.owner),
            "POST",
            f"/api/v1/quizzes/{quiz['id']}/questions/regrade/",
            json.dumps(body),
        )
        assert response.status_code == 400, response.content[:300]
        assert list(response.json()) == ["answer"]
    assert not QuizQuestionChange.objects.exists()
    assert not QuizRegrade.objects.exists()


def test_a_5000_digit_question_number_on_the_review_page_is_a_400(world, quiz_course):
    quiz = create(world)
    attempt = sit(world.lea, quiz["id"], right_answers)
    response = client(world.owner).post(
        f"/instructor/quiz-attempts/{attempt.pk}/",
        {"question": "9" * 5000, "points": "1", "comment": "why"},
    )
    assert response.status_code == 400
    assert response.context["errors"] == {"9" * 5000: "question: Pick a question."}
    assert not QuizItemOverride.objects.exists()


def test_a_5000_digit_self_check_choice_is_a_400(world, quiz_course):
    choice = Question.objects.get(lesson__slug="first-lesson", kind="choice")
    response = client(world.lea).post(
        f"/lessons/first-lesson/questions/{choice.pk}/answer/", {"answer": "9" * 5000}
    )
    assert response.status_code == 400
    assert "That option is not one of this question&#x27;s choices." in (
        response.content.decode()
    )
    assert not QuestionAttempt.objects.exists()


def test_a_5000_digit_quiz_on_the_assignment_form_is_a_400(world, quiz_course):
    response = client(world.owner).post(
        f"/instructor/cohorts/{world.cohort.pk}/assignments/new/",
        {
            "tz": "UTC",
            "title": "Week 1",
            "opens_at": (NOW - timedelta(days=1)).strftime(FORM_TIME),
            "due_at": (NOW + timedelta(days=1)).strftime(FORM_TIME),
            "late_policy": "none",
            "quiz": "9" * 5000,
        },
    )
    assert response.status_code == 400
    assert "No quiz &#x27;99999" in response.content.decode()
    assert not Assignment.objects.exists()


def test_an_lti_resource_naming_no_assignment_id_finds_nothing(world):
    claim = "https://purl.imsglobal.org/spec/lti/claim/custom"
    for key in ("²", "9" * 5000, str(2**70)):
        launch = {claim: {"resource": f"assignment:{key}"}}
        assert target_from_launch(launch, cohort_id=world.cohort.pk) is None


# NUL, which PostgreSQL text refuses ---------------------------------------------


def test_a_nul_in_a_form_is_a_400_naming_the_field(world, quiz_course):
    quiz = create(world)
    before = quiz_rows()
    for url, fields, name in [
        (
            f"/instructor/cohorts/{world.cohort.pk}/quizzes/new/",
            form(title="a\x00"),
            "title",
        ),
        (
            f"/instructor/quizzes/{quiz['id']}/reopen/",
            {"learner": "lea\x00", "closes_at": "2099-01-01T00:00", "tz": "UTC"},
            "learner",
        ),
        ("/cohorts/join/", {"code": "x\x00"}, "code"),
    ]:
        response = client(world.owner).post(url, fields)
        assert response.status_code == 400, (url, response.content[:300])
        assert response.content.decode() == (
            f'The form field "{name}" holds a NUL character (U+0000), which no '
            "text here can hold."
        )
    assert quiz_rows() == before
    assert not QuizAccommodation.objects.exists()


def test_a_nul_in_a_query_string_or_address_is_a_400(world, quiz_course):
    teacher = client(world.owner)
    for url, name in [
        ("/api/v1/quiz-bank/?q=a%00", "q"),
        (f"/api/v1/cohorts/{world.cohort.pk}/submissions/?exercise=%00", "exercise"),
    ]:
        response = teacher.get(url)
        assert response.status_code == 400, (url, response.content[:300])
        assert list(response.json()) == [name]
    page = teacher.get(f"/instructor/cohorts/{world.cohort.pk}/quiz-bank/?q=a%00")
    assert page.status_code == 400 and b'field "q" holds a NUL' in page.content
    joined = client(world.max).get("/cohorts/join/ab%00cd/")
    assert joined.status_code == 400 and b"The address holds a NUL" in joined.content


def test_a_nul_in_a_pool_slug_is_a_400_naming_slots(world, quiz_course):
    # DRF's CharField refuses NUL; a pool's lists are a DictField's values.
    body = quiz_body(slots=[{"pool": {"templates": ["params-of-a-model\x00"]}}])
    before = quiz_rows()
    response = quiz_post(world, body)
    assert response.status_code == 400, response.content[:300]
    assert response.json() == {
        "slots": ["Slot 1: templates lists slugs: one holds a NUL (or a surrogate)."]
    }
    assert quiz_rows() == before


def test_a_page_that_words_nul_itself_still_does(world, quiz_course):
    # The quiz page says which answer is wrong and keeps the others: the
    # middleware leaves its form to it (the exercise page's test is
    # tests/grader/test_exercise_page.py).
    quiz = create(world, shuffle=False)
    attempt = start(world.lea, quiz["id"]).json()
    numeric = next(q["number"] for q in attempt["questions"] if q["kind"] == "numeric")
    response = client(world.lea).post(
        f"/quizzes/attempts/{attempt['id']}/", {f"q-{numeric}": "12\x00"}
    )
    assert response.status_code == 400
    assert "is not a number" in response.content.decode()
    assert QuizAttempt.objects.get(pk=attempt["id"]).saves == 0


# The class behind the TypeErrors -------------------------------------------------


def _positional(classes: dict, name: str, seen: frozenset = frozenset()):
    """How many positional arguments class `name` takes (None: unknown, or
    any): its own __init__'s, else its bases'."""
    counts = []
    for init, bases in classes.get(name, []) if name not in seen else []:
        if init is not None:
            counts.append(init)
        else:
            counts += [
                n
                for base in bases
                if (n := _positional(classes, base, seen | {name})) is not None
            ]
    return min(counts) if counts else None


def test_no_error_is_raised_with_a_keyword_only_argument_by_position():
    """`raise QuizError(message, "slots")` raised TypeError, a 500, where a
    400 naming the slots was meant: its `field` is keyword-only. No error of
    ours is raised with more positional arguments than its __init__ takes."""
    trees = {
        path: ast.parse(path.read_text(), str(path))
        for folder in ("quiz", "grader", "teaching", "lms", "config")
        for path in (PROJECT_ROOT / folder).rglob("*.py")
        if "migrations" not in path.parts
    }
    classes: dict[str, list] = {}
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                init = next(
                    (
                        item.args
                        for item in node.body
                        if isinstance(item, ast.FunctionDef) and item.name == "__init__"
                    ),
                    None,
                )
                positional = None
                if init is not None and init.vararg is None:
                    positional = len(init.posonlyargs) + len(init.args) - 1  # self
                bases = [getattr(b, "id", getattr(b, "attr", "")) for b in node.bases]
                classes.setdefault(node.name, []).append((positional, bases))
    assert _positional(classes, "AttemptClosed") == 1  # through QuizError's
    raised, wrong = 0, []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)):
                continue
            call = node.exc
            name = getattr(call.func, "id", getattr(call.func, "attr", ""))
            allowed = _positional(classes, name)
            if allowed is None or any(isinstance(a, ast.Starred) for a in call.args):
                continue
            raised += 1
            if len(call.args) > allowed:
                where = path.relative_to(PROJECT_ROOT)
                wrong.append(f"{where}:{call.lineno}: {name} takes {allowed}")
    assert raised > 100  # the walk reaches the services' errors
    assert not wrong, wrong
