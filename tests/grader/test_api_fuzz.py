"""Schemathesis throws schema-shaped and malformed requests at every operation
of the OpenAPI schema: whatever arrives, the answer is a clear 4xx or a
success, never a 5xx.

Every operation is called as a learner (an API token) and as an instructor
(a browser session, CSRF and all), with real objects to point at: a cohort,
a quiz with the learner's open attempt, an assignment, a finished
submission, an exercise, a regrade and the learner's token. Each operation
gets, per caller:

- the explicit examples: the inputs of issue 43 that answered 500 (a
  5,000-digit integer, a lone surrogate, NaN, slot points and attempts out
  of range, a pool id past bigint, a 5,000-digit learner id, NUL in a
  pool's slug or a query string...), where the caller who reaches them
  must get a 400 naming the field; and, for every operation, a huge
  integer, a lone surrogate and a NUL in its body's first field and a NUL
  in each query parameter;
- generated cases: schema-valid and schema-breaking ones aimed at the real
  objects, and schema-valid ones with generated ids.

Each call runs in a savepoint rolled back after it, so every case meets
the same world (a DELETE or a submit does not starve the rest). The event
stream closes the database connection, which would end that transaction:
it meets the real submission in a transactional test of its own (STREAMS).

`make test` runs a short, seeded pass (SHORT: derandomized, a few cases per
operation, caller and kind); `make test-exhaustive` a long, random one
(LONG, test marked exhaustive). tests/test_inputs_that_answered_500.py
holds each issue-43 input as a plain test too.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
import schemathesis
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from django.middleware.csrf import _get_new_csrf_string
from django.test import Client
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from grader.models import Regrade
from quiz.core.api.tokens import token_issue
from quiz.models import Question
from teaching.assignments import services as assignments
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import submit
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import NOW, create, quiz_body, start

pytestmark = pytest.mark.django_db

HUGE = "1" * 5000  # past Python's 4,300-digit limit for int(text)
ROLES = ("learner", "instructor")


@dataclass(frozen=True)
class Budget:
    """Cases per operation and caller: with real ids (valid, then invalid
    for the schema), and valid with generated ids."""

    real: int
    broken: int
    generated: int
    derandomize: bool


SHORT = Budget(real=4, broken=3, generated=2, derandomize=True)
LONG = Budget(real=40, broken=40, generated=20, derandomize=False)


# The world every call meets ----------------------------------------------------


@dataclass
class Fuzzed:
    schema: object
    ids: dict  # path parameter -> a real object's
    auth: dict  # role -> kwargs for case.call
    explicit: list  # (method, path, body text, query, {role: field})
    statuses: Counter = field(default_factory=Counter)  # (role, status) -> calls


def _session_auth(user) -> dict:
    """A signed-in browser: session cookie, CSRF cookie and header."""
    browser = Client()
    browser.force_login(user)
    csrf = _get_new_csrf_string()
    return {
        "cookies": {
            settings.SESSION_COOKIE_NAME: browser.cookies[
                settings.SESSION_COOKIE_NAME
            ].value,
            settings.CSRF_COOKIE_NAME: csrf,
        },
        "headers": {"X-CSRFToken": csrf},
    }


def _explicit_cases(choice: int) -> list:
    """Issue 43's inputs: (method, path, raw body or None, query or None,
    {role: the field its 400 names}); a role left out need only get no 5xx."""
    quiz = "/api/v1/quizzes/{quiz_id}/"
    attempt = "/api/v1/attempts/{attempt_id}/"
    teacher = ("instructor",)
    learner = ("learner",)

    def quiz_with(points="2", attempts="1", slots=None) -> str:
        body = quiz_body()
        body["slots"][0]["points"] = "POINTS"
        body["attempts_allowed"] = "ATTEMPTS"
        if slots is not None:
            body["slots"] = slots
        text = json.dumps(body)
        return text.replace('"POINTS"', points).replace('"ATTEMPTS"', attempts)

    token = '{"username": "lea", "password": HUGE}'
    cases = [
        ("POST", "/api/v1/auth/token/", token, ROLES, "password"),
        ("PATCH", attempt, '{"flags": [HUGE]}', learner, "flags"),
        ("PATCH", attempt, '{"answers": {"1": HUGE}}', learner, "answers"),
        ("PATCH", attempt, '{"answers": {"\\ud800": 1}}', learner, "answers"),
        (
            "PATCH",
            attempt,
            json.dumps({"answers": {"9" * 5000: 1}}),
            learner,
            "answers",
        ),
    ]
    for method, path in (
        ("POST", "/api/v1/cohorts/{cohort_id}/quizzes/"),
        ("PATCH", quiz),
    ):
        for points in ('"NaN"', '"Infinity"', "0", "-1", "1001"):
            cases.append((method, path, quiz_with(points=points), teacher, "slots"))
        for literal in ("NaN", "Infinity", "1e999"):
            body = quiz_with(points=literal)
            cases.append((method, path, body, teacher, "slots"))
        for attempts in ("0", "101", "HUGE"):
            body = quiz_with(attempts=attempts)
            cases.append((method, path, body, teacher, "attempts_allowed"))
        body = quiz_with(slots=[{"pool": {"questions": [2**70]}}])
        cases.append((method, path, body, teacher, "slots"))
    for path, extra in (
        (quiz + "accommodations/", {"time_factor": 2}),
        (quiz + "reopen/", {"closes_at": "2099-01-01T00:00:00Z"}),
        ("/api/v1/assignments/{assignment_id}/extensions/", {"due_at": "2099-01-01"}),
        (
            "/api/v1/assignments/{assignment_id}/overrides/",
            {"item": 1, "score": 1, "reason": "r"},
        ),
    ):
        body = json.dumps({"learner": HUGE, **extra})
        cases.append(("POST", path, body, teacher, "learner"))
    body = json.dumps({"learner": "lea", "closes_at": "2000-01-01T00:00:00Z"})
    cases.append(("POST", quiz + "accommodations/", body, teacher, "closes_at"))
    for answer in ("9" * 5000, "²"):
        body = json.dumps(
            {"question": f"q:{choice}", "action": "key", "answer": answer}
        )
        cases.append(("POST", quiz + "questions/regrade/", body, teacher, "answer"))
    # NUL: in a pool's slug (a DictField's values: no CharField refuses it)
    # and in a query string.
    body = quiz_with(slots=[{"pool": {"templates": ["a\x00"]}}])
    cases.append(
        ("POST", "/api/v1/cohorts/{cohort_id}/quizzes/", body, teacher, "slots")
    )
    out = [
        (method, path, body.replace("HUGE", HUGE), None, dict.fromkeys(roles, named))
        for method, path, body, roles, named in cases
    ]
    for path, name in (
        ("/api/v1/quiz-bank/", "q"),
        ("/api/v1/cohorts/{cohort_id}/submissions/", "exercise"),
    ):
        out.append(("GET", path, None, {name: "a\x00"}, {"instructor": name}))
    return out


@pytest.fixture
def fuzzed(world, quiz_course, block_exercise) -> Fuzzed:
    quiz = create(world)
    attempt = start(world.lea, quiz["id"]).json()
    assignment = assignments.assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=NOW,
        due_at=NOW,
        items=[assignments.ItemSpec("lesson", "first-lesson", 1.0)],
    )
    submission = submit(world.lea, block_exercise, "passed")
    # The row alone: regrade_start would queue a grading task, sent at once
    # in the transactional test (to a worker another test may have started).
    regrade = Regrade.objects.create(
        exercise=block_exercise,
        requested_by=world.owner,
        scope=f"cohort {world.cohort.name}",
        cohort_id=world.cohort.pk,
        user_ids=[world.lea.pk, world.leo.pk],
    )
    token, key = token_issue(user=world.lea)
    ids = {
        "cohort_id": world.cohort.pk,
        "quiz_id": quiz["id"],
        "attempt_id": attempt["id"],
        "assignment_id": assignment.pk,
        "submission_id": str(submission.pk),
        "slug": block_exercise.slug,
        "regrade_id": regrade.pk,
        "token_id": token.pk,
    }
    choice = Question.objects.get(lesson__slug="first-lesson", kind="choice").pk
    return Fuzzed(
        schema=_schema(),
        ids=ids,
        auth={
            "learner": {"headers": {"Authorization": f"Token {key}"}},
            "instructor": _session_auth(world.owner),
        },
        explicit=_explicit_cases(choice),
    )


_SCHEMAS: list = []


def _schema():
    """The schema, loaded once: every call goes through the same WSGI app."""
    if not _SCHEMAS:
        from django.core.wsgi import get_wsgi_application

        with one_connection():
            app = get_wsgi_application()
            _SCHEMAS.append(schemathesis.openapi.from_wsgi("/api/v1/schema/", app))
    return _SCHEMAS[0]


@contextmanager
def one_connection():
    """As Django's test client does around its requests: keep the test's
    transaction open across requests instead of closing the connection
    after each one (the test client connects the handlers again after its
    own requests, so this wraps each call)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@contextmanager
def undone():
    """One request, whatever it writes rolled back after it."""
    with one_connection(), transaction.atomic():
        yield
        transaction.set_rollback(True)


# Calling ---------------------------------------------------------------------


def _call(fuzzed: Fuzzed, case, role: str, *, undo: bool = True, **extra):
    auth = fuzzed.auth[role]
    headers = {**auth.get("headers", {}), **extra.pop("headers", {})}
    with undone() if undo else one_connection():
        response = case.call(headers=headers, cookies=auth.get("cookies"), **extra)
    fuzzed.statuses[role, response.status_code] += 1
    if response.status_code >= 500:  # say what was sent: a raw body is not
        sent = extra.get("data", b"")[:200]  # in schemathesis's curl line
        raise AssertionError(
            f"{role}: {case.operation.label} {case.path_parameters} "
            f"{case.query or ''} {sent!r} -> {response.status_code} "
            f"{response.text[:300]}"
        )
    case.validate_response(response, checks=[not_a_server_error])
    return response


def _path_ids(operation, ids: dict) -> dict:
    return {name: ids[name] for name in re.findall(r"{(\w+)}", operation.path)}


def _first_field(operation) -> str | None:
    """The first property of the operation's JSON body, if it takes one."""
    for body in operation.body:
        if body.media_type == "application/json":
            properties = (body.resolved_schema or {}).get("properties") or {}
            return next(iter(properties), "body")
    return None


def _explicit(fuzzed: Fuzzed, operation, role: str) -> int:
    """Issue 43's cases for this operation; a huge integer, a lone surrogate
    and a NUL in its body's first field and in each query parameter: the
    caller who reaches them gets a 400 naming the field; nobody gets a 5xx.
    Returns the calls made."""
    path_ids = _path_ids(operation, fuzzed.ids)
    cases = [
        (body, query, roles.get(role))
        for method, path, body, query, roles in fuzzed.explicit
        if (method, path) == (operation.method.upper(), operation.path)
    ]
    first = _first_field(operation)
    if first is not None:
        cases += [
            (json.dumps({first: "HUGE"}).replace('"HUGE"', HUGE), None, None),
            ('{"%s": "\\ud800"}' % first, None, None),  # noqa: UP031
            (json.dumps({first: "a\x00"}), None, None),
        ]
    cases += [(None, {param.name: "a\x00"}, None) for param in operation.query]
    for body, query, named in cases:
        case = operation.Case(path_parameters=path_ids, query=query)
        extra = {}
        if body is not None:
            extra = {
                "data": body.encode(),
                "headers": {"Content-Type": "application/json"},
            }
        response = _call(fuzzed, case, role, **extra)  # no 5xx, or it raises
        shown = (body or str(query))[:80]
        if named is not None:
            assert response.status_code == 400, (
                role,
                operation.label,
                shown,
                response.text[:300],
            )
            data = response.json()
            assert named in data, (operation.label, shown, data)
    return len(cases)


def _generated(
    fuzzed: Fuzzed,
    operation,
    role: str,
    budget: Budget,
    *,
    real: bool = True,
    undo: bool = True,
) -> int:
    """Generated cases (`real`: also aimed at the real objects); returns
    how many were called."""
    ids = _path_ids(operation, fuzzed.ids)
    calls = [0]
    runs = [
        (GenerationMode.POSITIVE, ids, budget.real),
        (GenerationMode.NEGATIVE, ids, budget.broken),
        (GenerationMode.POSITIVE, None, budget.generated),
    ]
    # With its path fixed, an operation without a body or a query string has
    # nothing left to break (its only header and cookie are the optional
    # credentials, which the call sets): the engine would spin to find no case.
    breakable = len(operation.body) > 0 or len(operation.query) > 0
    for mode, path_parameters, examples in runs:
        if not examples or (path_parameters is not None and not real):
            continue
        if mode == GenerationMode.NEGATIVE and not breakable:
            continue
        if path_parameters is None and not ids and real:
            continue  # no ids in its path: the real runs were all there is
        strategy = operation.as_strategy(
            generation_mode=mode, path_parameters=path_parameters
        )

        @hypothesis_settings(
            max_examples=examples,
            derandomize=budget.derandomize,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
            print_blob=True,  # a failure prints @reproduce_failure(...)
        )
        @given(case=strategy)
        def run(case):
            calls[0] += 1
            response = _call(fuzzed, case, role, undo=undo)
            assert response.status_code < 500, (role, case.as_curl_command())

        try:
            run()
        except Unsatisfiable:
            continue  # nothing breaks this operation's schema (no inputs)
    return calls[0]


# A submission's event stream closes the database connection between reads
# (grader.live: an idle stream holds none), which would end the test's
# transaction: with the real submission it is fuzzed in a transactional
# test of its own, without the rollback (it writes nothing).
STREAMS = {("GET", "/api/v1/submissions/{submission_id}/events/")}


def _operations(fuzzed: Fuzzed) -> list:
    # .ok() raises for an operation the schema cannot describe.
    return [result.ok() for result in fuzzed.schema.get_all_operations()]


def _fuzz(fuzzed: Fuzzed, role: str, budget: Budget) -> None:
    operations = _operations(fuzzed)
    labels = {(op.method.upper(), op.path) for op in operations}
    # Every explicit case names a real operation (a typo would skip it).
    assert {(method, path) for method, path, *_ in fuzzed.explicit} <= labels
    assert labels >= STREAMS
    started, explicit, generated = time.monotonic(), 0, 0
    for operation in operations:
        stream = (operation.method.upper(), operation.path) in STREAMS
        explicit += _explicit(fuzzed, operation, role)
        generated += _generated(fuzzed, operation, role, budget, real=not stream)
    codes = sorted(
        (code, n) for (who, code), n in fuzzed.statuses.items() if who == role
    )
    print(
        f"\n{role}: {len(operations)} operations, {explicit} explicit and "
        f"{generated} generated cases in {time.monotonic() - started:.1f} s; "
        f"statuses {dict(codes)}"
    )
    assert generated >= len(operations)  # every operation was fuzzed
    # Not a vacuous pass: the caller got through (its credentials held) to
    # successes and to the views' own refusals, not only 401s and 403s.
    assert {200, 400} <= {code for code, _ in codes}


def _fuzz_streams(fuzzed: Fuzzed, role: str, budget: Budget) -> None:
    streams = [
        op for op in _operations(fuzzed) if (op.method.upper(), op.path) in STREAMS
    ]
    assert len(streams) == len(STREAMS)
    for operation in streams:
        assert _generated(fuzzed, operation, role, budget, undo=False)
    # The real submission's stream was served (its caller may read it).
    assert fuzzed.statuses[role, 200], dict(fuzzed.statuses)


@pytest.mark.parametrize("role", ROLES)
def test_no_request_gets_a_server_error(fuzzed, role):
    _fuzz(fuzzed, role, SHORT)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
def test_no_request_to_a_real_event_stream_gets_a_server_error(fuzzed, role):
    _fuzz_streams(fuzzed, role, SHORT)


@pytest.mark.exhaustive
@pytest.mark.parametrize("role", ROLES)
def test_no_request_gets_a_server_error_exhaustive(fuzzed, role):
    _fuzz(fuzzed, role, LONG)


@pytest.mark.exhaustive
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("role", ROLES)
def test_no_request_to_a_real_event_stream_gets_a_server_error_exhaustive(fuzzed, role):
    _fuzz_streams(fuzzed, role, LONG)
