"""Every page and endpoint the site has, asked by a learner mid-attempt.

The URL configuration is walked, not listed by hand, so a door added later
is tried too: each route is filled with the learner's own ids (their
lesson, self-checks, review card, earlier submission, quiz, attempt,
cohort, assignment) and fetched, and no response, whatever its status, may
hold a key of the held-back attempt being sat: a self-check's answer or
explanation, the exercise's solution or the learner's earlier passing
code, the template's explanation.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import URLResolver, get_resolver
from django.utils import timezone

from quiz.learning import review
from quiz.models import FollowUp, ReviewCard
from teaching.assignments.services import ItemSpec, assignment_create
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.cohort_fixtures import answer, submit
from tests.quiz.quiz_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import api, create, scored_questions

pytestmark = pytest.mark.django_db
SECRETS = (
    "b is right.",  # the choice self-check's explanation
    "12d^2 + 13d.",  # the numeric one's
    "7,087,872",  # its key, as pages and exports write it
    "7087872",
    "return 1",  # the exercise's solution, and the learner's passing code
    "reuses the token table",  # the template's explanation
)
# Not a door: the streams wait (tested on their own), the LMS's and the
# admin's need their own credentials, health and metrics hold no learner data.
SKIP = re.compile(r"^(admin/|\^admin|lti/|api/v1/schema|api/v1/docs|healthz|metrics)")
PARAM = re.compile(r"<(?:\w+:)?(\w+)>")


def routes(patterns=None, prefix=""):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, prefix + str(pattern.pattern))
        else:
            yield prefix + str(pattern.pattern)


def filled(route: str, values: dict[str, list]) -> list[str]:
    """Every path the route makes with the values given for its parameters."""
    paths = [route]
    for name in PARAM.findall(route):
        paths = [
            re.sub(rf"<(?:\w+:)?{name}>", str(value), path, count=1)
            for path in paths
            for value in values.get(name, [])
        ]
    return ["/" + path for path in paths]


def test_no_page_or_endpoint_shows_a_key_of_the_quiz_being_sat(world, quiz_course):
    exercise = quiz_course["exercises"]["ex-a"]
    earlier = submit(
        world.lea,
        exercise,
        "passed",
        checks=[{"name": "c", "passed": True, "message": "ok"}],
    )
    questions = scored_questions()
    answer(world.lea, questions["numeric"], correct=False)
    review.question_card_schedule(user=world.lea, question=questions["numeric"])
    quiz = create(
        world,
        feedback="after_close",
        shuffle=False,
        slots=[
            {"points": 1, "pool": {"questions": [questions["choice"].pk]}},
            {"points": 1, "pool": {"questions": [questions["numeric"].pk]}},
            {"points": 1, "pool": {"templates": ["params-of-a-model"]}},
            {"points": 1, "pool": {"exercises": ["ex-a"]}},
        ],
    )
    assignment = assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=timezone.now() - timedelta(days=1),
        due_at=timezone.now() + timedelta(days=1),
        items=[ItemSpec("quiz", str(quiz["id"])), ItemSpec("exercise", "ex-a")],
    )
    attempt = api(world.lea).post(f"/api/v1/quizzes/{quiz['id']}/attempts/").json()
    values = {
        "slug": ["first-lesson", "ex-a"],
        "question_id": [questions["choice"].pk, questions["numeric"].pk],
        "follow_up_id": [FollowUp.objects.first().pk],
        "card_id": [ReviewCard.objects.get(user=world.lea).pk],
        "submission_id": [earlier.pk],
        "quiz_id": [quiz["id"]],
        "attempt_id": [attempt["id"]],
        "cohort_id": [world.cohort.pk],
        "assignment_id": [assignment.pk],
        "user_id": [world.lea.pk],
        "shape": ["plain", "canvas"],
    }
    lea = Client()
    lea.force_login(world.lea)
    asked = 0
    for route in routes():
        if SKIP.match(route) or route.endswith("events/"):
            continue
        for path in filled(route, values):
            for accept in ("text/html", "application/json"):
                response = lea.get(path, HTTP_ACCEPT=accept)
                body = response.content.decode(errors="replace")
                for secret in SECRETS:
                    assert secret not in body, (path, accept, response.status_code)
                asked += 1
    assert asked > 150  # the walk reached the site, not a handful of routes
    # The event stream of the learner's earlier submission: closed while the
    # attempt is open, as its page is (the walk above skips streams, which
    # would otherwise wait for verdicts).
    (events,) = filled("api/v1/submissions/<uuid:submission_id>/events/", values)
    response = lea.get(events, HTTP_ACCEPT="text/event-stream")
    content = (
        b"".join(response.streaming_content) if response.streaming else response.content
    )
    body = content.decode(errors="replace")
    assert response.status_code == 403 and "feedback is closed" in body, body
    for secret in SECRETS:
        assert secret not in body, (events, secret)
