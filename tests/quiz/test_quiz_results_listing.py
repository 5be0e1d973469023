"""Learners find their quiz results: "Your quizzes" on the home page keeps a
quiz that closed recently, and "My grades" on the progress page lists every
assignment and quiz of their cohorts, each score as its feedback policy
releases it (never a held-back figure, never another learner's date).

Attempts go through the real services at chosen moments (`now=`).
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse

from teaching.assignments.services import ItemSpec, assignment_create
from teaching.models import QuizAttempt
from teaching.quizzes.services import (
    SlotSpec,
    accommodation_set,
    attempt_save,
    attempt_start,
    attempt_submit,
    quiz_create,
    quiz_update,
)
from tests.quiz.cohort_fixtures import *  # noqa: F403
from tests.quiz.quiz_fixtures import NOW, right_answers, scored_questions

pytestmark = pytest.mark.django_db
CHOICE_ONLY = {"1"}  # 2.5 of 4 points: 62.5%
ALL = {"1", "2"}  # 4 of 4 points: 100%
# leo's own later close: lea must never read it.
LEO_CLOSES = (NOW + timedelta(days=9, hours=3)).replace(minute=17)


def make_quiz(world, title, *, opens, closes, feedback="after_close", cohort=None,
              attempts=1):  # fmt: skip
    """Two slots, not shuffled: the choice self-check (2.5 points), then the
    numeric one (1.5 points)."""
    questions = scored_questions()
    cohort = cohort or world.cohort
    return quiz_create(
        cohort=cohort,
        actor=cohort.owner,
        slots=[
            SlotSpec(pool={"questions": [questions["choice"].pk]}, points=2.5),
            SlotSpec(pool={"questions": [questions["numeric"].pk]}, points=1.5),
        ],
        title=title,
        opens_at=NOW + opens,
        closes_at=NOW + closes,
        time_limit=None,
        attempts_allowed=attempts,
        combine="best",
        feedback=feedback,
        shuffle=False,
    )


def sit(quiz, user, at, right: set[str]) -> QuizAttempt:
    attempt, _ = attempt_start(quiz=quiz, learner=user, now=NOW + at)
    answers = {n: a for n, a in right_answers(attempt.pk).items() if n in right}
    attempt_save(attempt=attempt, answers=answers, now=NOW + at)
    return attempt_submit(attempt=attempt, now=NOW + at)


def days(n: float) -> timedelta:
    return timedelta(days=n)


def section(html: str, anchor: str) -> str:
    """The <section> whose attributes hold `anchor` (an id)."""
    match = re.search(rf"<section[^>]*{anchor}[^>]*>.*?</section>", html, re.S)
    assert match, anchor
    return match.group(0)


def row(html: str, element_id: str, end: str = "") -> str:
    """The element with this id, up to `end` (its own closing tag by default;
    a nested list's "</ul>" for an assignment)."""
    start = html.index(f'id="{element_id}"')
    tag = html.rindex("<", 0, start)
    end = end or f"</{html[tag + 1 : start].split()[0]}>"
    return html[tag : html.index(end, start)]


@pytest.fixture
def quizzes(world, course):
    closed = make_quiz(world, "Closed quiz", opens=days(-10), closes=days(-2))
    sit(closed, world.lea, days(-5), CHOICE_ONLY)  # released: closed for all
    # Closed for lea, not for leo (his later close): nobody's score shows.
    held = make_quiz(world, "Held quiz", opens=days(-10), closes=days(-1))
    accommodation_set(
        quiz=held, learner=world.leo, actor=world.owner, closes_at=LEO_CLOSES,
        now=NOW + days(-9),
    )  # fmt: skip
    sit(held, world.lea, days(-3), ALL)
    # Open, feedback per attempt, an attempt left: held until lea is done.
    per_attempt = make_quiz(
        world, "Per-attempt quiz", opens=days(-1), closes=days(3),
        feedback="after_submit", attempts=2,
    )  # fmt: skip
    sit(per_attempt, world.lea, timedelta(hours=-1), ALL)
    upcoming = make_quiz(world, "Upcoming quiz", opens=days(2), closes=days(4))
    old = make_quiz(world, "Old quiz", opens=days(-60), closes=days(-40))
    sit(old, world.lea, days(-50), CHOICE_ONLY)
    archived = make_quiz(world, "Archived quiz", opens=days(-10), closes=days(-2))
    sit(archived, world.lea, days(-5), ALL)
    quiz_update(quiz=archived, actor=world.owner, archived=True)
    theirs = make_quiz(
        world, "Their quiz", opens=days(-10), closes=days(-2),
        cohort=world.other_cohort,
    )  # fmt: skip
    sit(theirs, world.max, days(-5), ALL)
    return {
        "closed": closed,
        "held": held,
        "per_attempt": per_attempt,
        "upcoming": upcoming,
        "old": old,
        "archived": archived,
        "theirs": theirs,
    }


def page(client, user, name: str) -> str:
    client.force_login(user)
    response = client.get(reverse(name))
    assert response.status_code == 200
    return response.content.decode()


def test_home_lists_open_upcoming_then_recently_closed_quizzes(client, world, quizzes):
    panel = section(page(client, world.lea, "home"), 'aria-labelledby="my-quizzes"')
    order = ["per_attempt", "upcoming", "held", "closed"]  # closed: latest first
    at = [panel.index(f'id="home-quiz-{quizzes[k].pk}"') for k in order]
    assert at == sorted(at)
    # A closed quiz stays, with its released score, linked to its page.
    closed = row(panel, f"home-quiz-{quizzes['closed'].pk}")
    assert "Closed " in closed and "62.5%" in closed
    assert reverse("quiz", args=[quizzes["closed"].pk]) in closed
    # Closed more than 30 days ago: on My grades, which the panel links to.
    assert "Old quiz" not in panel
    assert f"{reverse('progress')}#my-grades" in panel and "1 closed earlier" in panel
    for name in ("Archived quiz", "Their quiz"):
        assert name not in panel


def test_a_held_back_score_shows_neither_figure_nor_anyone_elses_date(
    client, world, quizzes
):
    for name, anchor in (("home", "my-quizzes"), ("progress", "my-grades")):
        html = page(client, world.lea, name)
        listed = section(html, anchor)
        prefix = "home-quiz" if name == "home" else "grade-quiz"
        held = row(listed, f"{prefix}-{quizzes['held'].pk}")
        assert "results when the quiz has closed for everyone" in held
        per_attempt = row(listed, f"{prefix}-{quizzes['per_attempt'].pk}")
        assert (
            "results once you have used your attempts or the quiz has closed "
            "for you" in per_attempt
        )
        # Both were sat all right: 100% is theirs once released, not before.
        assert "100%" not in listed, name
        for shown in (LEO_CLOSES.isoformat()[:16], LEO_CLOSES.strftime("%Y-%m-%d")):
            assert shown not in html, name  # leo's close is his own
    # leo sees his own later close (his accommodation), lea's page never.
    leo_grades = section(page(client, world.leo, "progress"), "my-grades")
    assert LEO_CLOSES.strftime("%Y-%m-%d %H:%M") in leo_grades


def test_my_grades_lists_every_quiz_of_the_learners_cohorts(client, world, quizzes):
    grades = section(page(client, world.lea, "progress"), "my-grades")
    for key in ("closed", "held", "per_attempt", "upcoming", "old"):
        quiz = quizzes[key]
        assert f'id="grade-quiz-{quiz.pk}"' in grades, key
        assert reverse("quiz", args=[quiz.pk]) in grades  # its page, its attempts
    assert "62.5%" in row(grades, f"grade-quiz-{quizzes['closed'].pk}")
    assert "62.5%" in row(grades, f"grade-quiz-{quizzes['old'].pk}")
    assert "Archived quiz" not in grades and "Their quiz" not in grades
    # max sees his cohort's quiz, and nothing of lea's cohort.
    theirs = section(page(client, world.max, "progress"), "my-grades")
    assert "Their quiz" in theirs and "100%" in theirs
    assert "Closed quiz" not in theirs
    # A learner in no cohort gets no "My grades" at all.
    assert 'id="my-grades"' not in page(client, world.outsider, "progress")


def test_an_assignments_held_back_quiz_item_says_when_not_zero(client, world, quizzes):
    assignment = assignment_create(
        cohort=world.cohort,
        actor=world.owner,
        title="Week 1",
        opens_at=NOW - days(10),
        due_at=NOW + days(1),
        items=[
            ItemSpec("quiz", str(quizzes["held"].pk), 1),
            ItemSpec("quiz", str(quizzes["closed"].pk), 3),
        ],
    )
    for name in ("home", "progress"):
        html = page(client, world.lea, name)
        anchor = "assignment" if name == "home" else "grade-assignment"
        shown = row(html, f"{anchor}-{assignment.pk}", end="</ul>")
        held, closed = re.findall(r"<li>.*?</li>", shown, re.S)
        assert "results when the quiz has closed for everyone" in held
        assert "%" not in held and "not started" not in held
        assert "62.5%" in closed
        # 3 x 0.625 of 4 points, the held quiz counting 0 until it shows.
        assert "46.9%" in shown and "1.88 of 4 points" in shown
        assert "counts 0 until it shows" in shown
